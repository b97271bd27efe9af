// The reads behind /v1/analytics: sums of rollup columns over a range of buckets, with the report's
// filters, per group (the largest first, at most `limit`) and per bucket × group for those groups
// only. Only rollup tables are read (usage_hourly or usage_daily by bucket size, and the hourly
// error and circuit-opening tables, summed into days when asked); never ledger rows. One SQL for
// both engines: sums come back as strings on PostgreSQL (numeric) and are read as numbers.
import { SqliteAdapter, sql, type Kysely, type RawBuilder } from 'kysely';
import type { Tables } from '../../core/store/schema.js';
import type { AnalyticsQuery, Dimension } from './analytics-params.js';
import { BUCKET_MS } from './analytics-params.js';

export type AnalyticsTable = 'usage_hourly' | 'usage_daily' | 'usage_hourly_models' | 'usage_daily_models' | 'usage_errors_hourly' | 'circuit_openings_hourly';
export type Sums = Record<string, number>;
/** What rows are grouped by: a report's dimensions, and the error message (the errors report's top messages). */
export type Grouping = Dimension | 'message';
/** A group's values: provider, model, key (its id), status (a number), code, message. */
export type GroupId = Partial<Record<Grouping, string | number>>;

export interface GroupRow {
  group: GroupId;
  sums: Sums;
}
export interface SeriesRow extends GroupRow {
  /** Epoch ms of the bucket's start. */
  bucket: number;
}

const COLUMN: Record<Grouping, string> = { provider: 'provider', model: 'model', key: 'key_id', status: 'status', code: 'code', message: 'message' };

export interface SumRequest {
  table: AnalyticsTable;
  columns: readonly string[];
  /** Dimensions to group by (none: one group). */
  groupBy: readonly Grouping[];
  /** The column groups are ordered by, largest first. */
  orderBy?: string;
}

type Db = Kysely<Tables>;

/** How much of a range one SQLite statement ranks (readGroupsInChunks): a week; up to 8 days (a week widened to whole days) in one. */
const SQLITE_CHUNK_MS = 7 * 86_400_000;
const SQLITE_ONE_STATEMENT_MS = 8 * 86_400_000;

function base(db: Db, table: AnalyticsTable, query: AnalyticsQuery) {
  let select = (db as unknown as Kysely<any>).selectFrom(table).where('bucket', '>=', query.start).where('bucket', '<', query.end);
  if (query.keyId !== undefined) select = select.where('key_id', '=', query.keyId);
  if (query.provider !== undefined) select = select.where('provider', '=', query.provider);
  if (query.model !== undefined) select = select.where('model', '=', query.model);
  return select;
}

const sum = (column: string): RawBuilder<number> => sql<number>`coalesce(sum(${sql.ref(column)}), 0)`;

function readSums(row: Record<string, unknown>, columns: readonly string[]): Sums {
  const sums: Sums = {};
  for (const column of columns) sums[column] = Number(row[column] ?? 0);
  return sums;
}

function readGroup(row: Record<string, unknown>, groupBy: readonly Grouping[]): GroupId {
  const group: GroupId = {};
  for (const dimension of groupBy) group[dimension] = dimension === 'status' ? Number(row[COLUMN[dimension]]) : String(row[COLUMN[dimension]]);
  return group;
}

/** The sums of `columns` over the whole range (one row, zeros when nothing matched). */
export async function readTotals(db: Db, query: AnalyticsQuery, table: AnalyticsTable, columns: readonly string[]): Promise<Sums> {
  const row = await base(db, table, query)
    .select(columns.map((column) => sum(column).as(column)))
    .executeTakeFirst();
  return readSums(row ?? {}, columns);
}

/** The largest `limit` groups over the whole range, and whether there were more. */
export async function readGroups(db: Db, query: AnalyticsQuery, request: SumRequest, limit: number): Promise<{ groups: GroupRow[]; truncated: boolean }> {
  if (request.groupBy.length === 0) return { groups: [], truncated: false };
  const columns = request.groupBy.map((dimension) => COLUMN[dimension]);
  if (db.getExecutor().adapter instanceof SqliteAdapter && query.end - query.start > SQLITE_ONE_STATEMENT_MS) return readGroupsInChunks(db, query, request, limit);
  let select = base(db, request.table, query)
    .select([...columns, ...request.columns.map((column) => sum(column).as(column))])
    .groupBy(columns);
  if (request.orderBy) select = select.orderBy(sum(request.orderBy), 'desc');
  for (const column of columns) select = select.orderBy(column);
  const rows = await select.limit(limit + 1).execute();
  return { groups: rows.slice(0, limit).map((row) => ({ group: readGroup(row, request.groupBy), sums: readSums(row, request.columns) })), truncated: rows.length > limit };
}

/**
 * SQLite runs a query on the event loop: ranking every key × model of a month in one statement held
 * every request in flight for half a second (1.7 s over 100 days). A longer range is read a week at
 * a time instead (the benchmark's 1,000 keys × 20 models a day: ~120 ms a week), other work runs
 * between the weeks, and the groups are ranked here. A day at a time made the pauses ~17 ms but the
 * week's report 670 ms instead of 120 (each day's 20,000 groups come back to JavaScript); a week
 * (8 days, a week widened to whole days, in one statement) is what the 200 ms a report may take
 * allows. Same answer as one statement, ties ordered alike.
 */
async function readGroupsInChunks(db: Db, query: AnalyticsQuery, request: SumRequest, limit: number): Promise<{ groups: GroupRow[]; truncated: boolean }> {
  const columns = request.groupBy.map((dimension) => COLUMN[dimension]);
  const merged = new Map<string, GroupRow>();
  for (let from = query.start; from < query.end; from += SQLITE_CHUNK_MS) {
    if (from > query.start) await new Promise((resolve) => setImmediate(resolve));
    const rows = await base(db, request.table, { ...query, start: from, end: Math.min(from + SQLITE_CHUNK_MS, query.end) })
      .select([...columns, ...request.columns.map((column) => sum(column).as(column))])
      .groupBy(columns)
      .execute();
    for (const row of rows) {
      let id = '';
      for (const column of columns) id += `${String(row[column])}\u0000`;
      const seen = merged.get(id);
      if (!seen) merged.set(id, { group: readGroup(row, request.groupBy), sums: readSums(row, request.columns) });
      else for (const column of request.columns) seen.sums[column] = (seen.sums[column] ?? 0) + Number(row[column] ?? 0);
    }
  }
  const order = (a: GroupRow, b: GroupRow): number => {
    if (request.orderBy) {
      const difference = (b.sums[request.orderBy] ?? 0) - (a.sums[request.orderBy] ?? 0);
      if (difference !== 0) return difference;
    }
    for (const dimension of request.groupBy) {
      const x = a.group[dimension]!;
      const y = b.group[dimension]!;
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  };
  const ranked = [...merged.values()].sort(order);
  return { groups: ranked.slice(0, limit), truncated: ranked.length > limit };
}

/**
 * Sums per bucket (of the query's size) and group, for the groups given only (all when not
 * grouped), oldest bucket first. Hourly tables are summed into days for day buckets.
 */
export async function readSeries(db: Db, query: AnalyticsQuery, request: SumRequest, only: readonly GroupId[]): Promise<SeriesRow[]> {
  if (request.groupBy.length > 0 && only.length === 0) return [];
  const size = BUCKET_MS[query.bucket];
  const hourly = request.table === 'usage_errors_hourly' || request.table === 'circuit_openings_hourly';
  // (usage_hourly_models is read for hour buckets only: no summing into days.)
  // An integer literal, not a parameter: PostgreSQL types `bigint % $1` from the parameter's text otherwise.
  const bucket = hourly && query.bucket === 'day' ? sql<number>`${sql.ref('bucket')} - ${sql.ref('bucket')} % ${sql.raw(String(size))}` : sql<number>`${sql.ref('bucket')}`;
  const columns = request.groupBy.map((dimension) => COLUMN[dimension]);
  let select = base(db, request.table, query).select([bucket.as('period'), ...columns, ...request.columns.map((column) => sum(column).as(column))]);
  if (columns.length > 0) select = select.where(inGroups(request.groupBy, only));
  // The groups' keys, plainly: lets the (key_id, bucket) index find their rows (a row-value IN does not).
  if (request.groupBy.includes('key') && query.keyId === undefined) select = select.where('key_id', 'in', [...new Set(only.map((group) => String(group.key)))]);
  const rows = await select
    .groupBy([bucket, ...columns.map((column) => sql.ref(column))])
    .orderBy(bucket)
    .execute();
  return rows.map((row) => ({ bucket: Number(row.period), group: readGroup(row, request.groupBy), sums: readSums(row, request.columns) }));
}

/** `(provider, model) in (values (?, ?), …)`: exactly these groups (both engines take row values from VALUES). */
function inGroups(groupBy: readonly Grouping[], groups: readonly GroupId[]): RawBuilder<boolean> {
  // Typed casts: PostgreSQL reads VALUES parameters as text otherwise, and status is an integer.
  const value = (dimension: Grouping, group: GroupId) => (dimension === 'status' ? sql`cast(${Number(group.status)} as integer)` : sql`cast(${String(group[dimension])} as text)`);
  const tuples = groups.map((group) => sql`(${sql.join(groupBy.map((dimension) => value(dimension, group)))})`);
  return sql<boolean>`(${sql.join(groupBy.map((dimension) => sql.ref(COLUMN[dimension])))}) in (values ${sql.join(tuples)})`;
}

/** A group's identity as a string, to match series rows to their group. */
export const groupKey = (group: GroupId) => JSON.stringify(group);
