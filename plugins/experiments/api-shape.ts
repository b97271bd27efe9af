// Experiments as the admin API answers them: the definition and state, and `results` — per arm
// what it measured with 95% intervals and its comparison with the control arm, then the decision.
import type { Experiment } from './experiment-store.js';
import type { Judged } from './decision.js';
import type { ArmData } from './results.js';
import { shownEstimate } from './results.js';
import type { Comparison } from './stats.js';
import { feedbackMetrics } from './definition.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function apiExperiment(e: Experiment) {
  const d = e.definition;
  return {
    id: e.id,
    object: 'experiment',
    name: e.name,
    description: d.description,
    status: e.status,
    match: d.match,
    unit: d.unit,
    arms: d.arms,
    control: d.arms[0]!.name,
    metrics: d.metrics,
    primary_metric: d.primary_metric,
    guardrails: d.guardrails,
    early_stop: d.early_stop,
    min_detectable_effect: d.min_detectable_effect,
    alpha: d.alpha,
    duration_days: d.duration_days,
    created_by: e.createdBy,
    created_at: iso(e.createdAt),
    updated_at: iso(e.updatedAt),
    started_at: iso(e.startedAt),
    ends_at: iso(e.endsAt),
    finished_at: iso(e.finishedAt),
    finish_reason: e.finishReason,
    winner: e.winner,
    promoted: e.promotedArm === null ? null : { arm: e.promotedArm, by: e.promotedBy, at: iso(e.promotedAt) },
  };
}

function shownComparison(c: Comparison | undefined) {
  return c && { difference: c.difference, relative: c.relative, ci_low: c.low, ci_high: c.high, verdict: c.verdict };
}

function shownArm(e: Experiment, arm: ArmData, judged: Judged, control: boolean) {
  const definition = e.definition.arms.find((a) => a.name === arm.name)!;
  const versus = judged.comparisons.get(arm.name);
  const metric = (name: string, n: number) => ({
    ...shownEstimate(arm.estimates.get(name), n, arm.means.get(name) ?? null),
    ...(control ? {} : { vs_control: shownComparison(versus?.get(name)) ?? null }),
  });
  const metrics: Record<string, unknown> = {
    cost: metric('cost', arm.requests),
    latency: metric('latency', arm.requests),
    error_rate: metric('error_rate', arm.requests),
  };
  for (const name of feedbackMetrics(e.definition)) metrics[name] = metric(name, arm.feedbackCount.get(name) ?? 0);
  const perRequest = (total: number) => (arm.requests === 0 ? null : total / arm.requests);
  return {
    name: arm.name,
    model: definition.model ?? null,
    strategy: definition.strategy ?? null,
    weight: definition.weight,
    requests: arm.requests,
    units: arm.units,
    cost_per_request: arm.means.get('cost') ?? null,
    latency_ms: {
      p50: arm.p50?.value ?? null,
      p95: arm.p95?.value ?? null,
      p50_ci_low: arm.p50?.low ?? null,
      p50_ci_high: arm.p50?.high ?? null,
      p95_ci_low: arm.p95?.low ?? null,
      p95_ci_high: arm.p95?.high ?? null,
    },
    error_rate: arm.means.get('error_rate') ?? null,
    failed_over: arm.failedOver,
    cache_hits: arm.cacheHits,
    tokens_per_request: { prompt: perRequest(arm.promptTokens), completion: perRequest(arm.completionTokens) },
    metrics,
  };
}

export function apiResults(e: Experiment, judged: Judged & { arms: ArmData[] }) {
  return {
    arms: judged.arms.map((arm, i) => shownArm(e, arm, judged, i === 0)),
    decision: judged.decision,
    computed_at: new Date().toISOString(),
  };
}
