// The errors report: requests, errors, error rate, upstream calls, retries, fallbacks and circuit
// breaker openings over the range and per bucket (usage rollups and circuit_openings_hourly); errors
// per group_by (status, code, provider, model, key) and the most frequent messages, from
// usage_errors_hourly. Messages were redacted and anonymized before they were stored (ledger-row.ts).
// The error and circuit tables are hourly only: kept MODELGATE_METRICS_HOURLY_RETENTION days.
import type { Kysely } from 'kysely';
import type { Tables } from '../../core/store/schema.js';
import type { AnalyticsQuery } from './analytics-params.js';
import { readGroups, readSeries, readTotals, type Sums } from './analytics-store.js';
import { frame, groupFields, ratio, rollupTable, type Measures, type ReportFrame } from './analytics-reports.js';

type Db = Kysely<Tables>;

/** The most frequent messages listed. */
export const TOP_MESSAGES = 10;
/** Provider/model pairs listed with their circuit openings. */
const MAX_CIRCUITS = 100;

export interface ErrorsReport extends ReportFrame {
  totals: Measures;
  groups: Measures[];
  groups_truncated: boolean;
  series: Measures[];
  circuit_openings: Measures[];
  top_messages: Measures[];
}

const COLUMNS = ['requests', 'errors', 'attempts', 'retries', 'fallbacks'];

function measures(s: Sums, openings: number): Measures {
  return {
    requests: s.requests,
    errors: s.errors,
    error_rate: ratio(s.errors!, s.requests!),
    upstream_calls: s.attempts,
    retries: s.retries,
    fallbacks: s.fallbacks,
    circuit_openings: openings,
  };
}

export async function errorsReport(db: Db, query: AnalyticsQuery): Promise<ErrorsReport> {
  const usage = { table: rollupTable(query, []), columns: COLUMNS, groupBy: [] };
  const circuits = { table: 'circuit_openings_hourly' as const, columns: ['openings'], groupBy: [] };
  const [totals, openings, series, circuitSeries, grouped, byCircuit, messages] = await Promise.all([
    readTotals(db, query, usage.table, COLUMNS),
    readTotals(db, query, circuits.table, ['openings']),
    readSeries(db, query, usage, []),
    readSeries(db, query, circuits, []),
    readGroups(db, query, { table: 'usage_errors_hourly', columns: ['count'], groupBy: query.groupBy, orderBy: 'count' }, query.limit),
    readGroups(db, query, { table: 'circuit_openings_hourly', columns: ['openings'], groupBy: ['provider', 'model'], orderBy: 'openings' }, MAX_CIRCUITS),
    readGroups(db, query, { table: 'usage_errors_hourly', columns: ['count'], groupBy: ['code', 'message'], orderBy: 'count' }, TOP_MESSAGES),
  ]);
  const openingsAt = new Map(circuitSeries.map((row) => [row.bucket, row.sums.openings!]));
  const buckets = new Set([...series.map((row) => row.bucket), ...openingsAt.keys()]);
  const usageAt = new Map(series.map((row) => [row.bucket, row.sums]));
  const zero = Object.fromEntries(COLUMNS.map((column) => [column, 0]));
  const allErrors = totals.errors!;
  return {
    ...frame('errors', query),
    totals: measures(totals, openings.openings!),
    groups: grouped.groups.map((row) => ({ ...groupFields(row.group), errors: row.sums.count, share: ratio(row.sums.count!, allErrors) })),
    groups_truncated: grouped.truncated,
    series: [...buckets].sort((a, b) => a - b).map((bucket) => ({ bucket: new Date(bucket).toISOString(), ...measures(usageAt.get(bucket) ?? zero, openingsAt.get(bucket) ?? 0) })),
    circuit_openings: byCircuit.groups.map((row) => ({ ...groupFields(row.group), openings: row.sums.openings })),
    top_messages: messages.groups.map((row) => ({ code: row.group.code, message: row.group.message, count: row.sums.count })),
  };
}
