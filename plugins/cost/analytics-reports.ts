// The usage, costs and metrics reports: one shape — totals over the range, the largest groups
// (group_by), and a series per bucket × group for those groups — each with its own measures, read
// from usage_hourly (hour buckets) or usage_daily (day buckets). Buckets without traffic are left
// out of the series. The errors report (analytics-errors.ts) adds the error tables.
import type { Kysely } from 'kysely';
import type { Tables } from '../../core/store/schema.js';
import { LATENCY_BOUNDS, LATENCY_COLUMNS, OVERHEAD_BOUNDS, OVERHEAD_COLUMNS } from './rollups.js';
import { toUsd } from './pricing.js';
import { percentile } from './analytics-percentiles.js';
import { readGroups, readSeries, readTotals, groupKey, type AnalyticsTable, type GroupId, type Sums } from './analytics-store.js';
import type { AnalyticsQuery, ReportName } from './analytics-params.js';

type Db = Kysely<Tables>;
export type Measures = Record<string, unknown>;

export interface ReportSpec {
  columns: readonly string[];
  /** Groups are listed by this column, largest first. */
  orderBy: string;
  measures(sums: Sums): Measures;
}

export interface ReportFrame {
  object: string;
  start: string;
  end: string;
  bucket: string;
  group_by: string[];
  filters: { key_id: string | null; provider: string | null; model: string | null };
}

export interface Report extends ReportFrame {
  totals: Measures;
  groups: Measures[];
  /** More groups matched than `limit`: the smaller ones (and their series) are left out. */
  groups_truncated: boolean;
  series: Measures[];
}

const ratio = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 10_000) / 10_000 : 0);
const mean = (sum: number, count: number) => (count > 0 ? Math.round((sum / count) * 10) / 10 : null);

/** A group as the reports name its fields (`key` is `key_id`). */
export function groupFields(group: GroupId): Measures {
  const fields: Measures = {};
  for (const [dimension, value] of Object.entries(group)) fields[dimension === 'key' ? 'key_id' : dimension] = value;
  return fields;
}

export function frame(name: ReportName, query: AnalyticsQuery): ReportFrame {
  return {
    object: `analytics.${name}`,
    start: new Date(query.start).toISOString(),
    end: new Date(query.end).toISOString(),
    bucket: query.bucket,
    group_by: query.groupBy.map((dimension) => (dimension === 'key' ? 'key_id' : dimension)),
    filters: { key_id: query.keyId ?? null, provider: query.provider ?? null, model: query.model ?? null },
  };
}

/**
 * The rollup a report reads: per key when it is about keys (one key's, or grouped by key), else the
 * model rollups (no tenant, no key: a row per provider, model and status a bucket, not one per key).
 */
export function rollupTable(query: AnalyticsQuery, groupBy: readonly string[] = query.groupBy): AnalyticsTable {
  const keyed = query.keyId !== undefined || groupBy.includes('key');
  if (query.bucket === 'hour') return keyed ? 'usage_hourly' : 'usage_hourly_models';
  return keyed ? 'usage_daily' : 'usage_daily_models';
}

/** Totals, the largest groups and their series, with `spec`'s measures. */
export async function rollupReport(db: Db, name: ReportName, query: AnalyticsQuery, spec: ReportSpec): Promise<Report> {
  const request = { table: rollupTable(query), columns: spec.columns, groupBy: query.groupBy, orderBy: spec.orderBy };
  // Totals over every key need no key column: the model rollups hold them in fewer rows. The groups
  // are ranked by one column; their other sums are added up from their series (which covers them
  // whole), so the widest read sums one column instead of all.
  const [totals, ranked] = await Promise.all([
    readTotals(db, query, rollupTable(query, []), spec.columns),
    readGroups(db, query, { ...request, columns: [spec.orderBy] }, query.limit),
  ]);
  const series = await readSeries(
    db,
    query,
    request,
    ranked.groups.map((row) => row.group),
  );
  const sums = new Map(ranked.groups.map((row) => [groupKey(row.group), Object.fromEntries(spec.columns.map((column) => [column, 0])) as Sums]));
  const listed = series.filter((row) => query.groupBy.length === 0 || sums.has(groupKey(row.group)));
  for (const row of listed) {
    const total = sums.get(groupKey(row.group));
    if (total) for (const column of spec.columns) total[column]! += row.sums[column]!;
  }
  return {
    ...frame(name, query),
    totals: spec.measures(totals),
    groups: ranked.groups.map((row) => ({ ...groupFields(row.group), ...spec.measures(sums.get(groupKey(row.group))!) })),
    groups_truncated: ranked.truncated,
    series: listed.map((row) => ({ bucket: new Date(row.bucket).toISOString(), ...groupFields(row.group), ...spec.measures(row.sums) })),
  };
}

export const USAGE: ReportSpec = {
  columns: ['requests', 'errors', 'cache_hits', 'prompt_tokens', 'completion_tokens', 'cached_tokens', 'attempts', 'retries', 'fallbacks'],
  orderBy: 'requests',
  measures: (s) => ({
    requests: s.requests,
    errors: s.errors,
    cache_hits: s.cache_hits,
    prompt_tokens: s.prompt_tokens,
    completion_tokens: s.completion_tokens,
    cached_tokens: s.cached_tokens,
    total_tokens: s.prompt_tokens! + s.completion_tokens!,
    upstream_calls: s.attempts,
    retries: s.retries,
    fallbacks: s.fallbacks,
  }),
};

export const COSTS: ReportSpec = {
  columns: ['requests', 'cache_hits', 'prompt_tokens', 'completion_tokens', 'cost_nano', 'saved_nano'],
  orderBy: 'cost_nano',
  measures: (s) => ({
    requests: s.requests,
    cache_hits: s.cache_hits,
    prompt_tokens: s.prompt_tokens,
    completion_tokens: s.completion_tokens,
    cost_usd: toUsd(s.cost_nano!),
    cost_nano: s.cost_nano,
    saved_usd: toUsd(s.saved_nano!),
    saved_nano: s.saved_nano,
  }),
};

const histogram = (sums: Sums, columns: readonly string[]) => columns.map((column) => sums[column]!);

export const METRICS: ReportSpec = {
  columns: ['requests', 'errors', 'cache_hits', 'latency_ms_sum', ...LATENCY_COLUMNS, 'ttft_ms_sum', 'ttft_count', 'overhead_ms_sum', ...OVERHEAD_COLUMNS, 'gen_ms_sum', 'gen_tokens'],
  orderBy: 'requests',
  measures(s) {
    const latency = histogram(s, LATENCY_COLUMNS);
    const overhead = histogram(s, OVERHEAD_COLUMNS);
    const overheadCount = overhead.reduce((total, count) => total + count, 0);
    return {
      requests: s.requests,
      error_rate: ratio(s.errors!, s.requests!),
      cache_hit_ratio: ratio(s.cache_hits!, s.requests!),
      latency_ms: {
        mean: mean(s.latency_ms_sum!, s.requests!),
        p50: percentile(latency, LATENCY_BOUNDS, 0.5),
        p95: percentile(latency, LATENCY_BOUNDS, 0.95),
        p99: percentile(latency, LATENCY_BOUNDS, 0.99),
      },
      ttft_ms: { mean: mean(s.ttft_ms_sum!, s.ttft_count!), count: s.ttft_count },
      overhead_ms: {
        mean: mean(s.overhead_ms_sum!, overheadCount),
        p50: percentile(overhead, OVERHEAD_BOUNDS, 0.5),
        p95: percentile(overhead, OVERHEAD_BOUNDS, 0.95),
        p99: percentile(overhead, OVERHEAD_BOUNDS, 0.99),
        count: overheadCount,
      },
      tokens_per_second: s.gen_ms_sum! > 0 ? Math.round((s.gen_tokens! / s.gen_ms_sum!) * 10_000) / 10 : null,
    };
  },
};

export { ratio };
