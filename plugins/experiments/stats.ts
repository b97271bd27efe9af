// The statistics of A/B experiments, with no dependency but Math. Units (users) are randomized,
// not requests, and a unit's requests are not independent of each other: a per-request metric is
// a ratio of per-unit sums, estimated with the delta method (Deng et al., "Applying the Delta
// Method in Metric Analytics"). Arms are compared with the normal-mixture sequential probability
// ratio test (Johari, Pekelis, Walsh, "Always Valid Inference"), whose confidence sequence stays
// valid however often the results are looked at. Also: order-statistic intervals for quantiles.

/** Per arm, sums over its units u of: n_u (observations of the unit), y_u (sum of its values). */
export interface UnitSums {
  /** K, units with at least one observation */
  units: number;
  /** Σ n_u */
  n: number;
  /** Σ y_u */
  y: number;
  /** Σ n_u² */
  nn: number;
  /** Σ y_u² */
  yy: number;
  /** Σ y_u·n_u */
  yn: number;
}

/** The mean per observation (Σy/Σn) and the variance of that estimate (delta method, units iid). */
export interface Estimate {
  mean: number;
  variance: number;
  units: number;
  n: number;
}

export interface Comparison {
  /** treatment.mean − control.mean */
  difference: number;
  /** difference / |control.mean|, null when control.mean is 0 */
  relative: number | null;
  /** The anytime-valid (1−alpha) confidence sequence for the difference. */
  low: number;
  high: number;
  /** 'better' | 'worse' when the sequence excludes 0 (better = in the metric's good direction), else 'inconclusive' */
  verdict: 'better' | 'worse' | 'inconclusive';
}

/** Beyond this many units per arm, unitsNeeded stops looking. */
const MAX_UNITS = 1e9;

/**
 * The estimate of an arm's mean per observation, undefined below two units or without observations.
 * Its variance is (1/K)·(σ_y² − 2r·σ_yn + r²·σ_n²)/μ_n², the sample variance of the per-unit
 * residuals y_u − r·n_u over K·μ_n²: the units, not the requests, are the independent draws.
 */
export function estimate(sums: UnitSums): Estimate | undefined {
  const { units: k, n, y } = sums;
  if (k < 2 || n === 0) return undefined;
  const mean = y / n;
  const varY = (sums.yy - (y * y) / k) / (k - 1);
  const varN = (sums.nn - (n * n) / k) / (k - 1);
  const covYN = (sums.yn - (y * n) / k) / (k - 1);
  const meanN = n / k;
  const variance = (varY - 2 * mean * covYN + mean * mean * varN) / (k * meanN * meanN);
  // Cancellation in the sums can leave a tiny negative where the true value is 0.
  return { mean, variance: Math.max(0, variance), units: k, n };
}

/** Fixed-sample two-sided interval for one arm's mean: mean ± z·sqrt(variance). Valid for one look only. */
export function interval(e: Estimate, level = 0.95): { low: number; high: number } {
  const half = normalQuantile(1 - (1 - level) / 2) * Math.sqrt(e.variance);
  return { low: e.mean - half, high: e.mean + half };
}

/**
 * Compares a treatment arm with the control: the difference of their means and the (1−alpha)
 * confidence sequence of the normal-mixture mSPRT with mixture scale `tau` (see mixtureScale).
 */
export function compare(control: Estimate, treatment: Estimate, options: { alpha: number; higherIsBetter: boolean; tau: number }): Comparison {
  checkAlphaAndTau(options.alpha, options.tau);
  const difference = treatment.mean - control.mean;
  const relative = control.mean === 0 ? null : difference / Math.abs(control.mean);
  const half = sequenceRadius(control.variance + treatment.variance, options.tau, options.alpha);
  const low = difference - half;
  const high = difference + half;
  // With no variance at all the sequence is the single point `difference`.
  const sign = low > 0 ? 1 : high < 0 ? -1 : 0;
  const good = options.higherIsBetter ? 1 : -1;
  const verdict = sign === 0 ? 'inconclusive' : sign === good ? 'better' : 'worse';
  return { difference, relative, low, high, verdict };
}

/**
 * The mixture scale tau for compare: the size of effect the test is most sensitive to. The larger
 * of mde·|control.mean| (mde relative, e.g. 0.05) and mde standard deviations of one observation
 * (pooled over both arms); never 0. The second keeps rates near 0 testable: 5% of a 1% error rate
 * is a change no one asks about, and a tau that small makes the sequence needlessly wide.
 */
export function mixtureScale(control: Estimate, treatment: Estimate, mde: number): number {
  if (!(mde > 0) || !Number.isFinite(mde)) throw new RangeError(`mde must be a positive number, got ${mde}`);
  const relative = mde * Math.abs(control.mean);
  const pooled = Math.sqrt(pooledObservationVariance(control, treatment));
  const scale = Math.max(Number.isFinite(relative) ? relative : 0, Number.isFinite(pooled) ? mde * pooled : 0);
  if (scale > 0) return scale;
  return 1e-9 * Math.max(1, Math.abs(control.mean), Math.abs(treatment.mean));
}

/**
 * The units per arm (equal allocation assumed) at which an effect of `effect` (absolute, > 0)
 * would make the confidence sequence exclude 0, at today's per-unit variances (variance·units of
 * each arm): a total to compare with the units the arms have, not an increment. 0 when the
 * current data already do; null without any variance to go by. At most 1e9.
 */
export function unitsNeeded(control: Estimate, treatment: Estimate, options: { alpha: number; tau: number; effect: number }): number | null {
  const { alpha, tau, effect } = options;
  checkAlphaAndTau(alpha, tau);
  if (!(effect > 0) || !Number.isFinite(effect)) throw new RangeError(`effect must be a positive number, got ${effect}`);
  const perUnit = control.variance * control.units + treatment.variance * treatment.units;
  if (!(perUnit > 0) || !Number.isFinite(perUnit)) return null;
  if (sequenceRadius(control.variance + treatment.variance, tau, alpha) <= effect) return 0;
  const enough = (units: number) => sequenceRadius(perUnit / units, tau, alpha) <= effect;
  let high = 1;
  while (!enough(high)) {
    if (high >= MAX_UNITS) return MAX_UNITS;
    high = Math.min(MAX_UNITS, high * 2);
  }
  let low = Math.floor(high / 2); // not enough (or 0); `high` is
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (enough(middle)) high = middle;
    else low = middle;
  }
  // Unequal arms can make the equal-allocation answer look reached while the data say otherwise.
  return Math.min(MAX_UNITS, Math.max(high, Math.min(control.units, treatment.units) + 1));
}

/**
 * The distribution-free interval for the p-quantile of n sorted values: 0-based indices of the
 * order statistics bounding it at `level` (normal approximation to the binomial with continuity
 * correction, n·p ∓ z·sqrt(n·p·(1−p)), clamped to [0, n−1], so near the ends the cover is less
 * than asked), and the index of the point estimate (nearest rank).
 */
export function quantileIndices(n: number, p: number, level = 0.95): { estimate: number; lower: number; upper: number } {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`n must be a positive integer, got ${n}`);
  if (!(p >= 0 && p <= 1)) throw new RangeError(`p must be in [0, 1], got ${p}`);
  const clamp = (index: number) => Math.min(n - 1, Math.max(0, index));
  const center = n * p;
  const spread = normalQuantile(1 - (1 - level) / 2) * Math.sqrt(center * (1 - p));
  return {
    estimate: clamp(Math.ceil(center) - 1),
    lower: clamp(Math.floor(center - spread - 0.5)),
    upper: clamp(Math.ceil(center + spread - 0.5)),
  };
}

/**
 * The standard normal quantile: Acklam's rational approximation (relative error 1.15e-9) and one
 * Halley step against an accurate normal CDF, which leaves a relative error near 1e-13 or less.
 */
export function normalQuantile(p: number): number {
  if (!(p >= 0 && p <= 1)) throw new RangeError(`p must be in [0, 1], got ${p}`);
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  if (p > 0.5) return -normalQuantile(1 - p); // the lower half is where the CDF keeps its precision
  const x = acklam(p);
  const error = lowerTail(x) - p;
  const u = error * Math.sqrt(2 * Math.PI) * Math.exp((x * x) / 2);
  return Number.isFinite(u) ? x - u / (1 + (x * u) / 2) : x; // u overflows below p ≈ 1e-300
}

/** The radius of the mSPRT confidence sequence: Λ(δ) < 1/alpha where Λ is the mixture likelihood ratio. */
function sequenceRadius(variance: number, tau: number, alpha: number): number {
  if (variance === 0) return 0;
  const tau2 = tau * tau;
  const spread = (variance * (variance + tau2)) / tau2;
  return Math.sqrt(spread * (2 * Math.log(1 / alpha) + Math.log((variance + tau2) / variance)));
}

function checkAlphaAndTau(alpha: number, tau: number): void {
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1), got ${alpha}`);
  if (!(tau > 0) || !Number.isFinite(tau)) throw new RangeError(`tau must be a positive number, got ${tau}`);
}

/** The variance of one observation, pooled over both arms weighted by their observations. */
function pooledObservationVariance(control: Estimate, treatment: Estimate): number {
  const observations = control.n + treatment.n;
  if (!(observations > 0)) return 0;
  // An arm's variance of the mean times its n is the variance of one of its observations.
  return (control.variance * control.n * control.n + treatment.variance * treatment.n * treatment.n) / observations;
}

// Acklam's coefficients: central region, then the tail.
const A = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
const B = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
const C = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
const D = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];

/** Acklam's approximation of the quantile, for p in (0, 0.5]. */
function acklam(p: number): number {
  if (p < 0.02425) {
    const q = Math.sqrt(-2 * Math.log(p));
    return polynomial(C, q) / (polynomial(D, q) * q + 1);
  }
  const q = p - 0.5;
  const r = q * q;
  return (polynomial(A, r) * q) / (polynomial(B, r) * r + 1);
}

/** Horner's rule, highest power first. */
function polynomial(coefficients: readonly number[], x: number): number {
  return coefficients.reduce((sum, c) => sum * x + c, 0);
}

/**
 * Φ(x) for x ≤ 0, to relative precision: Marsaglia's series near 0 (all its terms positive) and
 * the continued fraction of the Mills ratio in the tail, where 0.5 − … would cancel.
 */
function lowerTail(x: number): number {
  const density = Math.exp(-(x * x) / 2) / Math.sqrt(2 * Math.PI);
  if (x > -3) {
    let term = x;
    let sum = x;
    for (let i = 3; Math.abs(term) > 1e-17 * Math.abs(sum); i += 2) {
      term *= (x * x) / i;
      sum += term;
    }
    return 0.5 + density * sum;
  }
  // Φ(x) = φ(x) / (t + 1/(t + 2/(t + 3/(t + …)))) with t = −x, evaluated from the bottom.
  const t = -x;
  let fraction = t;
  for (let k = 60; k >= 1; k--) fraction = t + k / fraction;
  return density / fraction;
}
