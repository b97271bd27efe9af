// The decision: which arm wins, if the evidence says so yet. The first arm is the control; every
// other arm is compared with it on the primary metric by an anytime-valid sequential test (mSPRT,
// stats.ts), at alpha divided among the comparisons (Bonferroni), so looking at the results every
// minute does not raise the chance of a false winner. An arm wins when it is better on the
// primary metric and breaches no guardrail; the control wins when every other arm is worse. Until
// then the answer says how many more units per arm an effect of the minimum detectable size needs.
import { compare, mixtureScale, unitsNeeded, type Comparison, type Estimate } from './stats.js';
import { higherIsBetter, type Definition, type Guardrail } from './definition.js';
import type { ArmData } from './results.js';

/** Fewer requests than this per arm: no p95 guardrail is judged (the interval is too wide to mean anything). */
const MIN_QUANTILE_REQUESTS = 20;
/**
 * Fewer units than this in either arm: a comparison is shown but decides nothing. The test's
 * variance is estimated from the data; with a handful of units that estimate (and so the interval)
 * cannot be trusted, whatever the formula says.
 */
export const MIN_UNITS = 10;

export interface Breach {
  arm: string;
  metric: Guardrail['metric'];
  detail: string;
}

export interface Decision {
  winner: string | null;
  reason: string;
  method: 'msprt';
  primary_metric: string;
  /** The confidence the decision holds at, however often it is looked at. */
  confidence: number;
  /** More units per arm an effect of the minimum detectable size still needs (null: unknown yet; 0: enough). */
  units_needed: number | null;
  guardrail_breaches: Breach[];
}

export interface Judged {
  decision: Decision;
  /** Per non-control arm and metric: the comparison with control. */
  comparisons: Map<string, Map<string, Comparison>>;
}

export function decide(definition: Definition, arms: readonly ArmData[]): Judged {
  const control = arms[0]!;
  // An arm of weight 0 gets no traffic: it is not compared (and takes no share of alpha).
  const weighted = new Set(definition.arms.filter((a) => a.weight > 0).map((a) => a.name));
  const others = arms.slice(1).filter((arm) => weighted.has(arm.name));
  const alpha = definition.alpha / Math.max(1, others.length);
  const primary = definition.primary_metric;
  const comparisons = new Map<string, Map<string, Comparison>>();
  const metrics = new Set([primary, 'cost', 'latency', 'error_rate', ...definition.metrics]);
  for (const arm of others) {
    const byMetric = new Map<string, Comparison>();
    for (const metric of metrics) {
      const c = control.estimates.get(metric);
      const t = arm.estimates.get(metric);
      if (!c || !t) continue;
      const comparison = compare(c, t, { alpha, higherIsBetter: higherIsBetter(metric), tau: mixtureScale(c, t, definition.min_detectable_effect) });
      byMetric.set(metric, c.units < MIN_UNITS || t.units < MIN_UNITS ? { ...comparison, verdict: 'inconclusive' } : comparison);
    }
    comparisons.set(arm.name, byMetric);
  }
  const breaches = others.flatMap((arm) => guardrailBreaches(definition, control, arm, comparisons.get(arm.name)!));
  const decision: Decision = {
    winner: null,
    reason: '',
    method: 'msprt',
    primary_metric: primary,
    confidence: 1 - definition.alpha,
    units_needed: null,
    guardrail_breaches: breaches,
  };
  const verdict = (arm: ArmData) => comparisons.get(arm.name)!.get(primary)?.verdict;
  const breached = new Set(breaches.map((b) => b.arm));
  // A guardrail not yet judgeable (too little data on it) holds a winner back as a breach would.
  const waiting = new Map(others.map((arm) => [arm.name, unjudged(definition, control, arm, comparisons.get(arm.name)!)]));
  const better = others.filter((arm) => verdict(arm) === 'better' && !breached.has(arm.name) && waiting.get(arm.name)!.length === 0);
  if (better.length > 0) {
    const direction = higherIsBetter(primary) ? 1 : -1;
    const best = better.reduce((a, b) => (direction * (mean(b, primary) - mean(a, primary)) > 0 ? b : a));
    decision.winner = best.name;
    decision.units_needed = 0;
    decision.reason = `${best.name} is better than ${control.name} on ${primary} at ${pct(1 - definition.alpha)} confidence (anytime-valid)${better.length > 1 ? `, and the best of ${better.length} arms that are` : ''}`;
    return { decision, comparisons };
  }
  if (others.length > 0 && others.every((arm) => verdict(arm) === 'worse')) {
    decision.winner = control.name;
    decision.units_needed = 0;
    decision.reason = `every other arm is worse than ${control.name} on ${primary} at ${pct(1 - definition.alpha)} confidence (anytime-valid)`;
    return { decision, comparisons };
  }
  decision.units_needed = stillNeeded(definition, control, others, comparisons, alpha);
  const vetoed = others.filter((arm) => verdict(arm) === 'better' && breached.has(arm.name)).map((arm) => arm.name);
  const held = others.filter((arm) => verdict(arm) === 'better' && !breached.has(arm.name));
  decision.reason = vetoed.length > 0
    ? `${vetoed.join(', ')} ${vetoed.length > 1 ? 'are' : 'is'} better on ${primary} but breach${vetoed.length > 1 ? '' : 'es'} a guardrail`
    : held.length > 0
      ? `${held[0]!.name} is better on ${primary}, but its guardrails cannot be judged yet (${waiting.get(held[0]!.name)!.join(', ')}: more data needed)`
      : arms.some((arm) => (arm.estimates.get(primary)?.units ?? 0) < MIN_UNITS)
      ? `not enough data yet: every arm needs ${primary} values from at least ${MIN_UNITS} units`
      : `no arm differs from ${control.name} on ${primary} at ${pct(1 - definition.alpha)} confidence yet${decision.units_needed === null ? '' : `; about ${decision.units_needed} more units per arm would detect a ${pct(definition.min_detectable_effect)} change`}`;
  return { decision, comparisons };
}

function mean(arm: ArmData, metric: string): number {
  return arm.estimates.get(metric)?.mean ?? Number.NaN;
}

function pct(share: number): string {
  return `${Number((share * 100).toPrecision(3))}%`;
}

/** The guardrails of `arm` there is too little data to judge yet. */
function unjudged(definition: Definition, control: ArmData, arm: ArmData, byMetric: Map<string, Comparison>): string[] {
  return definition.guardrails
    .filter((guard) =>
      guard.metric === 'latency_p95'
        ? !arm.p95 || !control.p95 || arm.requests < MIN_QUANTILE_REQUESTS || control.requests < MIN_QUANTILE_REQUESTS
        : !byMetric.has(guard.metric) || arm.units < MIN_UNITS || control.units < MIN_UNITS,
    )
    .map((guard) => guard.metric);
}

function guardrailBreaches(definition: Definition, control: ArmData, arm: ArmData, byMetric: Map<string, Comparison>): Breach[] {
  const out: Breach[] = [];
  for (const guard of definition.guardrails) {
    if (guard.metric === 'latency_p95') {
      if (!arm.p95 || !control.p95 || arm.requests < MIN_QUANTILE_REQUESTS || control.requests < MIN_QUANTILE_REQUESTS) continue;
      // Order-statistic intervals that do not overlap (beyond the tolerance): slower at p95 with confidence.
      if (arm.p95.low > control.p95.high + guard.tolerance) {
        out.push({ arm: arm.name, metric: guard.metric, detail: `p95 latency at least ${arm.p95.low} ms against at most ${control.p95.high} ms for ${control.name}` });
      }
      continue;
    }
    const c = byMetric.get(guard.metric);
    if (arm.units < MIN_UNITS || control.units < MIN_UNITS) continue;
    // Lower is better for error rate and cost: worse means the whole interval lies above the tolerance.
    if (c && c.low > guard.tolerance) out.push({ arm: arm.name, metric: guard.metric, detail: `${guard.metric} higher than ${control.name}'s by at least ${round(c.low)}` });
  }
  return out;
}

function round(x: number): number {
  return Number(x.toPrecision(3));
}

/** The most units per arm any undecided comparison still needs to see an effect of the minimum detectable size. */
function stillNeeded(definition: Definition, control: ArmData, others: readonly ArmData[], comparisons: Map<string, Map<string, Comparison>>, alpha: number): number | null {
  const c = control.estimates.get(definition.primary_metric);
  if (!c) return null;
  let most: number | null = 0;
  for (const arm of others) {
    const t: Estimate | undefined = arm.estimates.get(definition.primary_metric);
    if (!t || comparisons.get(arm.name)?.get(definition.primary_metric)?.verdict !== 'inconclusive') continue;
    const tau = mixtureScale(c, t, definition.min_detectable_effect);
    const effect = Math.abs(c.mean) > 0 ? definition.min_detectable_effect * Math.abs(c.mean) : tau;
    const needed = unitsNeeded(c, t, { alpha, tau, effect });
    if (needed === null) return null;
    const more = Math.max(0, Math.ceil(needed - Math.min(c.units, t.units)));
    most = Math.max(most, more);
  }
  return most;
}
