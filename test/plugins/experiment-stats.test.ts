// The experiments' statistics: known answers worked by hand, then seeded simulations — a planted
// difference is found and never reversed, an A/A test looked at after every batch of units
// declares a winner no more often than alpha allows (while a naive z-test peeked at as often
// does), and the units still needed shrink as data arrive and are just enough.
import t from 'tap';
import { compare, estimate, interval, mixtureScale, normalQuantile, quantileIndices, unitsNeeded, type Comparison, type Estimate, type UnitSums } from '../../plugins/experiments/stats.js';

/** mulberry32: a small seeded generator, uniform in [0, 1). */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296;
  };
}

/** Box–Muller: a standard normal draw. */
function normal(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

const exponential = (random: () => number, mean: number) => -mean * Math.log(1 - random());

/** How many requests a unit makes: 1–5, mostly 1–3 (1 + Binomial(4, 0.35)). */
function requestsOfUnit(random: () => number): number {
  let n = 1;
  for (let i = 0; i < 4; i++) if (random() < 0.35) n++;
  return n;
}

const emptySums = (): UnitSums => ({ units: 0, n: 0, y: 0, nn: 0, yy: 0, yn: 0 });

/** Adds one unit's values to an arm's sums, as the results query does per unit. */
function addUnit(sums: UnitSums, values: readonly number[]): void {
  const n = values.length;
  const y = values.reduce((sum, value) => sum + value, 0);
  sums.units += 1;
  sums.n += n;
  sums.y += y;
  sums.nn += n * n;
  sums.yy += y * y;
  sums.yn += y * n;
}

function sumsOf(units: readonly (readonly number[])[]): UnitSums {
  const sums = emptySums();
  for (const values of units) addUnit(sums, values);
  return sums;
}

const radiusOf = (c: Comparison) => (c.high - c.low) / 2;

t.test('known answers', async (t) => {
  t.test('units of one observation each: the sample mean and s²/K', async (t) => {
    const e = estimate(sumsOf([[2], [4], [4], [4], [5], [5], [7], [9]]))!;
    // Mean 40/8 = 5; squared deviations 9+1+1+1+0+0+4+16 = 32, s² = 32/7, s²/K = 4/7.
    t.equal(e.mean, 5);
    t.ok(Math.abs(e.variance - 4 / 7) < 1e-12, `variance ${e.variance} is 4/7`);
    t.equal(e.units, 8);
    t.equal(e.n, 8);
  });

  t.test('a ratio metric: the delta method by hand', async (t) => {
    // Units (n_u, y_u) = (1, 2), (2, 6), (3, 4): r = 12/6 = 2, μ_n = 2, σ_y² = 4, σ_n² = 1, σ_yn = 1,
    // variance = (1/3)·(4 − 2·2·1 + 4·1)/2² = 1/3 (the residuals y_u − r·n_u = 0, 2, −2 agree: 4/(3·4)).
    const sums: UnitSums = { units: 3, n: 6, y: 12, nn: 14, yy: 56, yn: 26 };
    t.same(sumsOf([[2], [3, 3], [1, 1, 2]]), sums, 'the sums of those units');
    const e = estimate(sums)!;
    t.equal(e.mean, 2);
    t.ok(Math.abs(e.variance - 1 / 3) < 1e-12, `variance ${e.variance} is 1/3`);
  });

  t.test('no estimate below two units or without observations; no negative variance', async (t) => {
    t.equal(estimate(sumsOf([[1, 2, 3]])), undefined);
    t.equal(estimate(emptySums()), undefined);
    t.equal(estimate({ units: 2, n: 0, y: 0, nn: 0, yy: 0, yn: 0 }), undefined);
    const same = estimate(sumsOf(Array.from({ length: 1000 }, () => [0.1, 0.1])))!;
    t.ok(same.variance >= 0 && same.variance < 1e-15, `identical units: variance ${same.variance}`);
  });

  t.test('the normal quantile', async (t) => {
    t.ok(Math.abs(normalQuantile(0.975) - 1.959963985) < 1e-6);
    t.ok(Math.abs(normalQuantile(0.975) - 1.959963984540054) < 1e-12);
    t.ok(Math.abs(normalQuantile(0.95) - 1.6448536269514722) < 1e-12);
    t.ok(Math.abs(normalQuantile(1e-10) + 6.361340902404056) < 1e-9, 'deep in the tail');
    t.equal(normalQuantile(0.5), 0);
    for (const p of [0.001, 0.02, 0.1, 0.3, 0.45]) t.ok(Math.abs(normalQuantile(p) + normalQuantile(1 - p)) < 1e-12, `symmetric at ${p}`);
    t.equal(normalQuantile(0), -Infinity);
    t.equal(normalQuantile(1), Infinity);
    t.throws(() => normalQuantile(1.5), RangeError);
  });

  t.test('the fixed-sample interval of one arm', async (t) => {
    const e: Estimate = { mean: 10, variance: 4, units: 50, n: 120 };
    const at95 = interval(e);
    t.ok(Math.abs(at95.low - (10 - 3.919927969080108)) < 1e-9 && Math.abs(at95.high - (10 + 3.919927969080108)) < 1e-9, '10 ± 1.96·2');
    const at90 = interval(e, 0.9);
    t.ok(Math.abs(at90.high - at90.low - 2 * 3.2897072539029444) < 1e-9, '10 ± 1.645·2');
  });

  t.test('the order statistics bounding a quantile', async (t) => {
    // The median of 100 values: nearest rank 50 (index 49); the binomial's 95% interval is ranks 40 and 61.
    t.same(quantileIndices(100, 0.5), { estimate: 49, lower: 39, upper: 60 });
    const p95 = quantileIndices(20, 0.95);
    t.equal(p95.estimate, 18, 'the 19th of 20 values');
    t.ok(p95.lower >= 0 && p95.lower <= p95.estimate && p95.upper >= p95.estimate && p95.upper <= 19, `within [0, 19]: ${JSON.stringify(p95)}`);
    t.equal(quantileIndices(20, 0.95).upper, 19, 'clamped to the last value');
    t.same(quantileIndices(1, 0.5), { estimate: 0, lower: 0, upper: 0 });
    t.equal(quantileIndices(10, 0).estimate, 0);
    t.equal(quantileIndices(10, 1).estimate, 9);
    t.throws(() => quantileIndices(0, 0.5), RangeError);
  });

  t.test('the confidence sequence is the mSPRT formula', async (t) => {
    // V = 0.01 + 0.03 = 0.04, τ = 0.1, α = 0.05: radius² = V(V+τ²)/τ²·(2·ln 20 + ln((V+τ²)/V))
    // = 0.04·0.05/0.01·(5.991464547107982 + ln 1.25 = 0.22314355131420976) = 0.2·6.214608098422192.
    const control: Estimate = { mean: 1, variance: 0.01, units: 100, n: 250 };
    const treatment: Estimate = { mean: 1.5, variance: 0.03, units: 100, n: 250 };
    const c = compare(control, treatment, { alpha: 0.05, higherIsBetter: true, tau: 0.1 });
    t.ok(Math.abs(radiusOf(c) - 1.114863946714772) < 1e-12, `radius ${radiusOf(c)}`);
    t.equal(c.difference, 0.5);
    t.equal(c.relative, 0.5);
    t.equal(c.verdict, 'inconclusive');
    // At the sequence's edge the mixture likelihood ratio is exactly 1/α.
    const [V, tau2] = [0.04, 0.01];
    const ratio = Math.sqrt(V / (V + tau2)) * Math.exp((tau2 * (c.difference - c.low) ** 2) / (2 * V * (V + tau2)));
    t.ok(Math.abs(ratio - 20) < 1e-9, `Λ(low) = ${ratio}`);
  });

  t.test('verdicts follow the metric direction; no variance leaves a point', async (t) => {
    const at = (mean: number, variance: number): Estimate => ({ mean, variance, units: 100, n: 100 });
    t.equal(compare(at(1, 0.001), at(2, 0.001), { alpha: 0.05, higherIsBetter: true, tau: 0.1 }).verdict, 'better');
    t.equal(compare(at(1, 0.001), at(2, 0.001), { alpha: 0.05, higherIsBetter: false, tau: 0.1 }).verdict, 'worse');
    t.equal(compare(at(2, 0.001), at(1, 0.001), { alpha: 0.05, higherIsBetter: false, tau: 0.1 }).verdict, 'better');
    t.same(compare(at(1, 0), at(1.25, 0), { alpha: 0.05, higherIsBetter: true, tau: 0.1 }), { difference: 0.25, relative: 0.25, low: 0.25, high: 0.25, verdict: 'better' });
    t.equal(compare(at(1, 0), at(1, 0), { alpha: 0.05, higherIsBetter: true, tau: 0.1 }).verdict, 'inconclusive');
    t.equal(compare(at(0, 0.01), at(0.1, 0.01), { alpha: 0.05, higherIsBetter: true, tau: 0.1 }).relative, null);
    t.throws(() => compare(at(1, 0.01), at(1, 0.01), { alpha: 0.05, higherIsBetter: true, tau: 0 }), RangeError);
    t.throws(() => compare(at(1, 0.01), at(1, 0.01), { alpha: 1, higherIsBetter: true, tau: 0.1 }), RangeError);
  });

  t.test('the mixture scale', async (t) => {
    const control: Estimate = { mean: -4, variance: 0.02, units: 100, n: 200 };
    const treatment: Estimate = { mean: 3, variance: 0.01, units: 100, n: 200 };
    t.equal(mixtureScale(control, treatment, 0.05), 0.2, 'mde·|control mean|');
    // Control mean 0: per-observation variances 0.02·200 = 4 and 0.01·200 = 2, pooled 3.
    t.ok(Math.abs(mixtureScale({ ...control, mean: 0 }, treatment, 0.1) - 0.1 * Math.sqrt(3)) < 1e-12, 'mde·pooled sd');
    // A 1% rate with a standard deviation of 0.1 per observation: 5% of the sd, not 5% of the mean.
    const rate: Estimate = { mean: 0.01, variance: 0.0001, units: 100, n: 100 };
    t.ok(Math.abs(mixtureScale(rate, rate, 0.05) - 0.005) < 1e-12, 'the larger of the two: mde·pooled sd');
    const nothing: Estimate = { mean: 0, variance: 0, units: 10, n: 10 };
    t.ok(mixtureScale(nothing, nothing, 0.1) > 0, 'never 0');
    t.throws(() => mixtureScale(control, treatment, 0), RangeError);
  });
});

/** One arm's per-unit values: `requests` draws of `value`, given the unit's own level. */
type Draw = (random: () => number, unit: number) => number;

interface Metric {
  name: string;
  higherIsBetter: boolean;
  /** A unit's own level (users differ), then its requests' values around it. */
  unit: (random: () => number) => number;
  control: Draw;
  treatment: Draw;
}

const ALPHA = 0.05;
const MDE = 0.1;

/**
 * Runs one experiment: `batch` more units per arm before each of `looks` looks; at every look, per
 * metric, the mSPRT verdict and whether a naive fixed-sample z-test would call it.
 */
function runExperiment(seed: number, metrics: readonly Metric[], looks: number, batch: number, onLook: (metric: number, comparison: Comparison, naive: boolean, c: Estimate, t: Estimate) => void): void {
  const random = generator(seed);
  const arms = metrics.map(() => ({ control: emptySums(), treatment: emptySums() }));
  for (let look = 0; look < looks; look++) {
    for (let i = 0; i < batch; i++) {
      for (const side of ['control', 'treatment'] as const) {
        const requests = requestsOfUnit(random);
        for (const [m, metric] of metrics.entries()) {
          const level = metric.unit(random);
          const values = Array.from({ length: requests }, () => metric[side](random, level));
          addUnit(arms[m]![side], values);
        }
      }
    }
    for (const [m, metric] of metrics.entries()) {
      const c = estimate(arms[m]!.control);
      const tr = estimate(arms[m]!.treatment);
      if (!c || !tr) continue;
      const comparison = compare(c, tr, { alpha: ALPHA, higherIsBetter: metric.higherIsBetter, tau: mixtureScale(c, tr, MDE) });
      const naive = Math.abs(tr.mean - c.mean) > normalQuantile(1 - ALPHA / 2) * Math.sqrt(c.variance + tr.variance);
      onLook(m, comparison, naive, c, tr);
    }
  }
}

const quality: Metric = {
  name: 'quality',
  higherIsBetter: true,
  unit: () => 0,
  control: (random) => 3.5 + normal(random),
  treatment: (random) => 3.8 + normal(random),
};

/** Cost per request: users differ (each has an exponential level), requests are exponential around it. */
const cost = (treatmentMean: number): Metric => ({
  name: 'cost',
  higherIsBetter: false,
  unit: (random) => exponential(random, 1),
  control: (random, level) => exponential(random, level),
  treatment: (random, level) => exponential(random, level * treatmentMean),
});

const errorRate: Metric = {
  name: 'error_rate',
  higherIsBetter: false,
  unit: () => 0,
  control: (random) => (random() < 0.05 ? 1 : 0),
  treatment: (random) => (random() < 0.05 ? 1 : 0),
};

t.test('a planted difference is found, and never reversed', async (t) => {
  let found = 0;
  let reversed = 0;
  const firstLooks: number[] = [];
  for (let run = 0; run < 20; run++) {
    let first = -1;
    let look = 0;
    runExperiment(1000 + run, [quality], 80, 50, (_, comparison) => {
      look++;
      if (comparison.verdict === 'better' && first < 0) first = look;
      if (comparison.verdict === 'worse') reversed++;
    });
    if (first > 0) found++;
    firstLooks.push(first * 50);
  }
  t.comment(`quality +0.3: found in ${found}/20 runs, at ${firstLooks.join(', ')} units per arm`);
  t.ok(found >= 18, `found in ${found} of 20 runs`);
  t.equal(reversed, 0, 'never worse');
});

t.test('a cheaper treatment is better on a lower-is-better cost', async (t) => {
  const verdicts = new Set<string>();
  let last: Comparison | undefined;
  runExperiment(77, [cost(0.8)], 80, 50, (_, comparison) => {
    verdicts.add(comparison.verdict);
    last = comparison;
  });
  t.ok(verdicts.has('better'), `verdicts seen: ${[...verdicts].join(', ')}`);
  t.notOk(verdicts.has('worse'));
  t.equal(last?.verdict, 'better');
  t.ok(last!.difference < 0 && last!.high < 0, 'the treatment costs less');
});

t.test('A/A: looking after every batch keeps false winners within alpha, a naive test does not', async (t) => {
  const RUNS = 400;
  const metrics = [cost(1), errorRate];
  const sequential = metrics.map(() => 0);
  const naive = metrics.map(() => 0);
  for (let run = 0; run < RUNS; run++) {
    const called = metrics.map(() => false);
    const naiveCalled = metrics.map(() => false);
    runExperiment(5000 + run, metrics, 40, 40, (m, comparison, naiveCall) => {
      if (comparison.verdict !== 'inconclusive') called[m] = true;
      if (naiveCall) naiveCalled[m] = true;
    });
    for (const m of metrics.keys()) {
      if (called[m]) sequential[m]!++;
      if (naiveCalled[m]) naive[m]!++;
    }
  }
  const bound = ALPHA + 3 * Math.sqrt((ALPHA * (1 - ALPHA)) / RUNS);
  for (const [m, metric] of metrics.entries()) {
    const rate = sequential[m]! / RUNS;
    const naiveRate = naive[m]! / RUNS;
    t.comment(`${metric.name}: mSPRT called a winner in ${rate.toFixed(4)} of A/A runs, the naive peeked z-test in ${naiveRate.toFixed(4)}`);
    t.ok(rate <= bound, `${metric.name}: ${rate} ≤ ${bound.toFixed(4)}`);
    t.ok(naiveRate > ALPHA, `${metric.name}: peeking inflates the naive test (${naiveRate} > ${ALPHA})`);
  }
});

t.test('units needed', async (t) => {
  t.test('none to go by without variance', async (t) => {
    const flat: Estimate = { mean: 1, variance: 0, units: 10, n: 20 };
    t.equal(unitsNeeded(flat, flat, { alpha: ALPHA, tau: 0.1, effect: 0.1 }), null);
  });

  t.test('shrink as data arrive, 0 once the sequence is narrow enough, and just enough', async (t) => {
    const effect = 0.1;
    const remaining: number[] = [];
    let sawZero = false;
    runExperiment(42, [quality], 60, 50, (_, comparison, _naive, c, tr) => {
      const tau = mixtureScale(c, tr, MDE);
      const needed = unitsNeeded(c, tr, { alpha: ALPHA, tau, effect });
      if (needed === null) return t.fail('a variance to go by');
      if (radiusOf(comparison) <= effect) {
        if (needed !== 0) t.fail(`0 expected once the radius ${radiusOf(comparison)} ≤ ${effect}, got ${needed}`);
        sawZero = true;
        return;
      }
      if (needed <= Math.min(c.units, tr.units)) t.fail(`more than the ${c.units} units so far expected, got ${needed}`);
      remaining.push(needed - Math.min(c.units, tr.units));
      // The returned units per arm, at today's per-unit variance, are enough, and one fewer is not.
      const at = (units: number) =>
        radiusOf(compare({ ...c, variance: (c.variance * c.units) / units }, { ...tr, variance: (tr.variance * tr.units) / units }, { alpha: ALPHA, higherIsBetter: true, tau }));
      if (!(at(needed) <= effect && at(needed - 1) > effect)) t.fail(`at ${needed} units the radius is ${at(needed)}, at one fewer ${at(needed - 1)}`);
    });
    t.comment(`units per arm still to go, look by look: ${remaining.join(', ')}`);
    t.ok(remaining.length >= 5, 'several looks before the sequence is narrow enough');
    t.ok(remaining[0]! > 0);
    for (let i = 5; i < remaining.length; i += 5) t.ok(remaining[i]! < remaining[i - 5]!, `fewer to go after 250 more units per arm (${remaining[i - 5]} → ${remaining[i]})`);
    t.ok(sawZero, 'reaches 0');
  });

  t.test('capped far out of reach', async (t) => {
    const noisy: Estimate = { mean: 1, variance: 1e6, units: 10, n: 10 };
    t.equal(unitsNeeded(noisy, noisy, { alpha: ALPHA, tau: 1, effect: 1e-6 }), 1e9);
  });
});
