// The decision over per-arm data: an arm better on the primary metric wins unless a guardrail
// vetoes it; the control wins when every other arm is worse; nothing is decided below ten units
// per arm, whatever the numbers; with several arms the best of the better ones wins; and until a
// decision the answer says how many more units an effect of the minimum detectable size needs.
import t from 'tap';
import { decide, MIN_UNITS } from '../../plugins/experiments/decision.js';
import type { ArmData } from '../../plugins/experiments/results.js';
import type { Definition } from '../../plugins/experiments/definition.js';
import type { Estimate } from '../../plugins/experiments/stats.js';

function definition(extra: Partial<Definition> = {}): Definition {
  return {
    description: null,
    match: { percent: 100 },
    unit: 'user',
    arms: [{ name: 'control', model: 'a', weight: 1 }, { name: 'b', model: 'b', weight: 1 }],
    metrics: ['user_satisfaction'],
    primary_metric: 'user_satisfaction',
    guardrails: [{ metric: 'error_rate', tolerance: 0 }, { metric: 'latency_p95', tolerance: 0 }],
    early_stop: false,
    min_detectable_effect: 0.05,
    alpha: 0.05,
    duration_days: 7,
    ...extra,
  };
}

/** An arm whose units each gave one value: mean, standard deviation of a value, units. */
function est(mean: number, sd: number, units: number): Estimate {
  return { mean, variance: (sd * sd) / units, units, n: units };
}

function arm(name: string, metrics: Record<string, Estimate>, p95 = { value: 500, low: 450, high: 550 }): ArmData {
  const estimates = new Map<string, Estimate | undefined>(Object.entries(metrics));
  const units = Object.values(metrics)[0]?.units ?? 0;
  return {
    name,
    requests: units,
    units,
    errors: 0,
    failedOver: 0,
    cacheHits: 0,
    promptTokens: 0,
    completionTokens: 0,
    estimates,
    means: new Map([...estimates].map(([k, v]) => [k, v?.mean ?? null])),
    feedbackCount: new Map(),
    p50: { value: 300, low: 280, high: 320 },
    p95,
  };
}

t.test('a clearly better arm wins; the comparison says by how much', async (t) => {
  const { decision, comparisons } = decide(definition(), [
    arm('control', { user_satisfaction: est(3.5, 1, 2000), error_rate: est(0.01, 0.1, 2000) }),
    arm('b', { user_satisfaction: est(3.8, 1, 2000), error_rate: est(0.01, 0.1, 2000) }),
  ]);
  t.match(decision, { winner: 'b', method: 'msprt', units_needed: 0, guardrail_breaches: [] });
  const c = comparisons.get('b')!.get('user_satisfaction')!;
  t.ok(c.low > 0 && c.high > c.low, `interval [${c.low.toFixed(3)}, ${c.high.toFixed(3)}] above 0`);
  t.ok(Math.abs(c.difference - 0.3) < 1e-9);
});

t.test('a guardrail vetoes a winner: more errors, or slower at p95', async (t) => {
  const errors = decide(definition(), [
    arm('control', { user_satisfaction: est(3.5, 1, 2000), error_rate: est(0.01, 0.1, 2000) }),
    arm('b', { user_satisfaction: est(3.8, 1, 2000), error_rate: est(0.08, 0.27, 2000) }),
  ]).decision;
  t.equal(errors.winner, null);
  t.match(errors.guardrail_breaches, [{ arm: 'b', metric: 'error_rate' }]);
  t.match(errors.reason, /guardrail/);
  const slow = decide(definition(), [
    arm('control', { user_satisfaction: est(3.5, 1, 2000) }),
    arm('b', { user_satisfaction: est(3.8, 1, 2000) }, { value: 900, low: 850, high: 950 }),
  ]).decision;
  t.equal(slow.winner, null);
  t.match(slow.guardrail_breaches, [{ arm: 'b', metric: 'latency_p95' }]);
  const tolerated = decide(definition({ guardrails: [{ metric: 'latency_p95', tolerance: 500 }] }), [
    arm('control', { user_satisfaction: est(3.5, 1, 2000) }),
    arm('b', { user_satisfaction: est(3.8, 1, 2000) }, { value: 900, low: 850, high: 950 }),
  ]).decision;
  t.equal(tolerated.winner, 'b', 'within the tolerance');
});

t.test('the control wins when every other arm is worse; the best of several better arms wins', async (t) => {
  const worse = decide(definition({ guardrails: [], arms: [{ name: 'control', weight: 1, model: 'a' }, { name: 'b', weight: 1, model: 'b' }, { name: 'c', weight: 1, model: 'c' }] }), [
    arm('control', { user_satisfaction: est(4, 1, 3000) }),
    arm('b', { user_satisfaction: est(3.5, 1, 3000) }),
    arm('c', { user_satisfaction: est(3.6, 1, 3000) }),
  ]).decision;
  t.equal(worse.winner, 'control');
  const best = decide(definition({ guardrails: [], arms: [{ name: 'control', weight: 1, model: 'a' }, { name: 'b', weight: 1, model: 'b' }, { name: 'c', weight: 1, model: 'c' }] }), [
    arm('control', { user_satisfaction: est(3, 1, 3000) }),
    arm('b', { user_satisfaction: est(3.5, 1, 3000) }),
    arm('c', { user_satisfaction: est(3.7, 1, 3000) }),
  ]).decision;
  t.equal(best.winner, 'c');
  const cheaper = decide(definition({ metrics: ['cost'], primary_metric: 'cost', guardrails: [] }), [
    arm('control', { cost: est(0.002, 0.0005, 500) }),
    arm('b', { cost: est(0.001, 0.0005, 500) }),
  ]).decision;
  t.equal(cheaper.winner, 'b', 'lower is better for cost');
});

t.test('too few units decide nothing; undecided results say how many more units are needed', async (t) => {
  const few = decide(definition(), [arm('control', { user_satisfaction: est(1, 0.01, MIN_UNITS - 1) }), arm('b', { user_satisfaction: est(5, 0.01, MIN_UNITS - 1) })]).decision;
  t.equal(few.winner, null, 'a huge difference over nine units each is not a decision');
  t.match(few.reason, /at least 10 units/);
  const close = decide(definition(), [arm('control', { user_satisfaction: est(3.5, 1, 200) }), arm('b', { user_satisfaction: est(3.52, 1, 200) })]).decision;
  t.equal(close.winner, null);
  t.ok(close.units_needed! > 0, `${close.units_needed} more units per arm`);
  t.match(close.reason, /more units per arm would detect a 5% change/);
  const moreData = decide(definition(), [arm('control', { user_satisfaction: est(3.5, 1, 800) }), arm('b', { user_satisfaction: est(3.52, 1, 800) })]).decision;
  t.ok(moreData.units_needed! < close.units_needed!, 'the need shrinks as data arrive');
  const none = decide(definition(), [arm('control', {}), arm('b', {})]).decision;
  t.match(none, { winner: null, units_needed: null });
});

t.test('a guardrail that cannot be judged yet holds a winner back; an arm of weight 0 is not compared', async (t) => {
  // Twelve single-request units per arm: enough for the primary metric, too few requests for a p95 guardrail.
  const early = decide(definition(), [
    arm('control', { user_satisfaction: est(3, 0.5, 12), error_rate: est(0, 0, 12) }),
    arm('b', { user_satisfaction: est(4.5, 0.5, 12), error_rate: est(0, 0, 12) }, { value: 30_000, low: 29_000, high: 31_000 }),
  ]).decision;
  t.equal(early.winner, null, 'b is better on the primary metric, but its p95 cannot be judged yet');
  t.match(early.reason, /latency_p95/);
  const noErrors = decide(definition({ guardrails: [{ metric: 'error_rate', tolerance: 0 }] }), [
    arm('control', { user_satisfaction: est(3, 0.5, 200) }),
    arm('b', { user_satisfaction: est(4, 0.5, 200) }),
  ]).decision;
  t.equal(noErrors.winner, null, 'a guardrail without its metric measured holds too');
  const idle = definition({ guardrails: [], arms: [{ name: 'control', weight: 1, model: 'a' }, { name: 'b', weight: 1, model: 'b' }, { name: 'off', weight: 0, model: 'c' }] });
  const judged = decide(idle, [arm('control', { user_satisfaction: est(4, 1, 3000) }), arm('b', { user_satisfaction: est(3.5, 1, 3000) }), arm('off', {})]);
  t.equal(judged.decision.winner, 'control', 'the arm without traffic does not keep the control from winning');
  t.notOk(judged.comparisons.has('off'));
});
