// An experiment's results, read from its exposures and feedback by SQL aggregates: per arm and
// unit first (a unit's requests are not independent of each other), then per arm the sums the
// delta method needs (stats.ts). Cost, latency and errors come from the exposures, feedback
// metrics from the feedback table; p50/p95 latency are order statistics read from a grouped
// latency histogram. Three scans in all; the database does them, this file adds up their rows.
import { sql } from 'kysely';
import type { Store } from '../../core/store/database.js';
import { estimate, interval, quantileIndices, type Estimate, type UnitSums } from './stats.js';
import { feedbackMetrics, type Definition } from './definition.js';

export interface Quantile {
  value: number;
  low: number;
  high: number;
}

/** What one arm measured. Costs in USD, latencies in ms. */
export interface ArmData {
  name: string;
  requests: number;
  units: number;
  errors: number;
  failedOver: number;
  cacheHits: number;
  promptTokens: number;
  completionTokens: number;
  /** Per metric (cost, latency, error_rate, each feedback metric): the estimate, undefined below two units. */
  estimates: Map<string, Estimate | undefined>;
  /** Per metric: the mean per observation (null without any), shown even when there are too few units for an interval. */
  means: Map<string, number | null>;
  /** Per feedback metric: values received. */
  feedbackCount: Map<string, number>;
  p50: Quantile | null;
  p95: Quantile | null;
}

interface SumsRow {
  arm: string;
  units: number;
  n: number;
  nn: number;
  [column: string]: string | number;
}

const NANO = 1e9;
/** Exposure columns analysed per unit, and the metric each becomes. */
const MEASURED = [
  ['cost', 1 / NANO],
  ['latency', 1],
  ['error_rate', 1],
] as const;

export async function readArms(store: Store, experimentId: string, definition: Definition): Promise<ArmData[]> {
  const db = store.db;
  const perUnit = await sql<SumsRow>`
    select arm, count(*) as units, sum(n) as n, sum(n * n) as nn,
      sum(cost) as cost_y, sum(cost * cost) as cost_yy, sum(cost * n) as cost_yn,
      sum(latency) as latency_y, sum(latency * latency) as latency_yy, sum(latency * n) as latency_yn,
      sum(err) as error_rate_y, sum(err * err) as error_rate_yy, sum(err * n) as error_rate_yn,
      sum(failed_over) as failed_over, sum(cache_hits) as cache_hits, sum(prompt) as prompt, sum(completion) as completion
    from (
      select arm, unit, cast(count(*) as double precision) as n,
        cast(sum(cost_nano) as double precision) as cost, cast(sum(latency_ms) as double precision) as latency,
        cast(sum(error) as double precision) as err, sum(failed_over) as failed_over, sum(cache_hit) as cache_hits,
        sum(prompt_tokens) as prompt, sum(completion_tokens) as completion
      from experiment_exposures where experiment_id = ${experimentId} group by arm, unit
    ) per_unit group by arm`.execute(db);
  const feedback = feedbackMetrics(definition);
  const perUnitFeedback = feedback.length === 0 ? { rows: [] as Array<SumsRow & { metric: string }> } : await sql<SumsRow & { metric: string }>`
    select metric, arm, count(*) as units, sum(n) as n, sum(n * n) as nn, sum(y) as y, sum(y * y) as yy, sum(y * n) as yn
    from (
      select metric, arm, unit, cast(count(*) as double precision) as n, cast(sum(value) as double precision) as y
      from experiment_feedback where experiment_id = ${experimentId} group by metric, arm, unit
    ) per_unit group by metric, arm`.execute(db);

  const latencies = await latencyHistograms(store, experimentId);
  const arms: ArmData[] = [];
  for (const arm of definition.arms) {
    const row = perUnit.rows.find((r) => r.arm === arm.name);
    const data: ArmData = {
      name: arm.name,
      requests: num(row?.n),
      units: num(row?.units),
      errors: num(row?.error_rate_y),
      failedOver: num(row?.failed_over),
      cacheHits: num(row?.cache_hits),
      promptTokens: num(row?.prompt),
      completionTokens: num(row?.completion),
      estimates: new Map(),
      means: new Map(),
      feedbackCount: new Map(),
      p50: null,
      p95: null,
    };
    for (const [metric, factor] of MEASURED) {
      const sums = row && sumsOf(row, metric);
      const found = sums && estimate(sums);
      data.estimates.set(metric, found && scaled(found, factor));
      data.means.set(metric, sums && sums.n > 0 ? (sums.y / sums.n) * factor : null);
    }
    for (const metric of feedback) {
      const f = perUnitFeedback.rows.find((r) => r.arm === arm.name && r.metric === metric);
      const sums = f && { units: num(f.units), n: num(f.n), nn: num(f.nn), y: num(f.y), yy: num(f.yy), yn: num(f.yn) };
      data.feedbackCount.set(metric, sums?.n ?? 0);
      data.estimates.set(metric, sums && estimate(sums));
      data.means.set(metric, sums && sums.n > 0 ? sums.y / sums.n : null);
    }
    data.p50 = quantile(latencies.get(arm.name), 0.5);
    data.p95 = quantile(latencies.get(arm.name), 0.95);
    arms.push(data);
  }
  return arms;
}

function num(value: string | number | undefined | null): number {
  return value === undefined || value === null ? 0 : Number(value);
}

function sumsOf(row: SumsRow, prefix: string): UnitSums {
  return { units: num(row.units), n: num(row.n), nn: num(row.nn), y: num(row[`${prefix}_y`]), yy: num(row[`${prefix}_yy`]), yn: num(row[`${prefix}_yn`]) };
}

function scaled(e: Estimate, factor: number): Estimate {
  return { ...e, mean: e.mean * factor, variance: e.variance * factor * factor };
}

/**
 * Latencies rounded where nobody reads the last digit — exact below 1 s, to 10 ms below 10 s, to
 * 100 ms above — so one grouped scan returns at most a few thousand rows per arm, from which the
 * order statistics are read exactly.
 */
const LATENCY_BUCKET = sql<number>`case when latency_ms < 1000 then latency_ms when latency_ms < 10000 then (latency_ms / 10) * 10 else (latency_ms / 100) * 100 end`;

/** Per arm: [latency, requests] ascending. */
async function latencyHistograms(store: Store, experimentId: string): Promise<Map<string, Array<[number, number]>>> {
  const { rows } = await sql<{ arm: string; latency: number; n: number }>`
    select arm, ${LATENCY_BUCKET} as latency, count(*) as n from experiment_exposures
    where experiment_id = ${experimentId} group by 1, 2 order by 1, 2`.execute(store.db);
  const out = new Map<string, Array<[number, number]>>();
  for (const row of rows) {
    let histogram = out.get(row.arm);
    if (!histogram) out.set(row.arm, (histogram = []));
    histogram.push([num(row.latency), num(row.n)]);
  }
  return out;
}

/** The value at 0-based rank `k` of the sorted values a histogram counts. */
function atRank(histogram: ReadonlyArray<[number, number]>, k: number): number {
  let seen = 0;
  for (const [value, count] of histogram) {
    seen += count;
    if (k < seen) return value;
  }
  return histogram.at(-1)?.[0] ?? 0;
}

/** The arm's p-quantile of latency with its distribution-free 95% interval; null without requests. */
function quantile(histogram: ReadonlyArray<[number, number]> | undefined, p: number): Quantile | null {
  const n = histogram?.reduce((sum, [, count]) => sum + count, 0) ?? 0;
  if (!histogram || n === 0) return null;
  const at = quantileIndices(n, p);
  return { value: atRank(histogram, at.estimate), low: atRank(histogram, at.lower), high: atRank(histogram, at.upper) };
}

/** An estimate as answered: n, mean and its fixed-sample 95% interval (null below two units). */
export function shownEstimate(e: Estimate | undefined, n: number, mean: number | null) {
  if (!e) return { n, mean, ci_low: null, ci_high: null };
  const { low, high } = interval(e, 0.95);
  return { n, mean: e.mean, ci_low: low, ci_high: high };
}
