// An experiment's results, read from its exposures and feedback by SQL aggregates: per arm and
// unit first (a unit's requests are not independent of each other), then per arm the sums the
// delta method needs (stats.ts). Cost, latency and errors come from the exposures, feedback
// metrics from the feedback table; p50/p95 latency are order statistics read by index. The
// database does the scanning; this file only adds up a handful of rows per arm.
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
    data.p50 = await quantile(store, experimentId, arm.name, data.requests, 0.5);
    data.p95 = await quantile(store, experimentId, arm.name, data.requests, 0.95);
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

/** The arm's p-quantile of latency with its distribution-free 95% interval; null without requests. */
async function quantile(store: Store, experimentId: string, arm: string, n: number, p: number): Promise<Quantile | null> {
  if (n === 0) return null;
  const at = quantileIndices(n, p);
  const read = async (offset: number) => {
    const row = await store.db
      .selectFrom('experiment_exposures')
      .select('latency_ms')
      .where('experiment_id', '=', experimentId)
      .where('arm', '=', arm)
      .orderBy('latency_ms')
      .limit(1)
      .offset(offset)
      .executeTakeFirst();
    return num(row?.latency_ms);
  };
  return { value: await read(at.estimate), low: await read(at.lower), high: await read(at.upper) };
}

/** An estimate as answered: n, mean and its fixed-sample 95% interval (null below two units). */
export function shownEstimate(e: Estimate | undefined, n: number, mean: number | null) {
  if (!e) return { n, mean, ci_low: null, ci_high: null };
  const { low, high } = interval(e, 0.95);
  return { n, mean: e.mean, ci_low: low, ci_high: high };
}
