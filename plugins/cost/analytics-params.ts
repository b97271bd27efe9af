// The query of a /v1/analytics report, read and bounded: `start`/`end` (an ISO 8601 instant, a UTC
// date, or `24h`/`7d`/`30m`/`2w` back from now; default the last 24 hours), `bucket` (hour or day;
// default hour up to 48 hours, day beyond), `group_by` (a comma list of provider, model, key, status,
// and code for errors), the filters `key_id`/`provider`/`model`, `limit` (groups listed) and
// `format` (json, or csv for usage and costs). Every bad value is a 400 naming its param; unknown
// params are ignored, as GET /v1/usage does.
import { GatewayError } from '../../core/errors.js';
import { DAY_MS, HOUR_MS } from './rollups.js';

export type ReportName = 'usage' | 'costs' | 'errors' | 'metrics';
export type Dimension = 'provider' | 'model' | 'key' | 'status' | 'code';
export type BucketSize = 'hour' | 'day';

export interface AnalyticsQuery {
  /** Epoch ms, aligned to the bucket: the first bucket's start. */
  start: number;
  /** Epoch ms, aligned to the bucket: the end of the last bucket (exclusive). */
  end: number;
  bucket: BucketSize;
  groupBy: Dimension[];
  keyId?: string;
  provider?: string;
  model?: string;
  /** Groups listed (the largest first); the series covers only these. */
  limit: number;
  format: 'json' | 'csv';
}

export const MAX_RANGE_DAYS = 400;
export const MAX_BUCKETS = 2000;
/** Series points (buckets × groups) one report may hold; bounds `limit`. */
export const MAX_POINTS = 20_000;
export const MAX_LIMIT = 1000;
const DEFAULT_LIMIT = 100;
/** Ranges up to this long get hour buckets unless asked otherwise. */
const HOURLY_BY_DEFAULT_MS = 48 * HOUR_MS;
const MAX_FILTER = 200;
const MAX_TIME = 64;

export const DIMENSIONS: Record<ReportName, readonly Dimension[]> = {
  usage: ['provider', 'model', 'key', 'status'],
  costs: ['provider', 'model', 'key', 'status'],
  errors: ['provider', 'model', 'key', 'status', 'code'],
  metrics: ['provider', 'model', 'key', 'status'],
};
/** group_by when none is given. */
export const DEFAULT_GROUPS: Record<ReportName, readonly Dimension[]> = {
  usage: [],
  costs: ['provider', 'model'],
  errors: ['code'],
  metrics: ['provider', 'model'],
};
export const CSV_REPORTS: readonly ReportName[] = ['usage', 'costs'];

export const BUCKET_MS: Record<BucketSize, number> = { hour: HOUR_MS, day: DAY_MS };

const RELATIVE = /^(\d{1,6})([mhdw])$/;
const UNIT_MS: Record<string, number> = { m: 60_000, h: HOUR_MS, d: DAY_MS, w: 7 * DAY_MS };
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/;

const bad = (param: string, message: string) => new GatewayError('bad_request', { param, message: `Invalid value for '${param}': ${message}` });

/** Epoch ms of a `start`/`end` value; a date is its day's start (`start`) or its end (`end`: the day is included). */
export function parseTime(param: 'start' | 'end', value: string, now: number): number {
  if (value.length > MAX_TIME) throw bad(param, `at most ${MAX_TIME} characters.`);
  if (param === 'end' && value === 'now') return now;
  const relative = RELATIVE.exec(value);
  if (relative) return now - Number(relative[1]) * UNIT_MS[relative[2]!]!;
  const date = DATE.exec(value);
  if (date) {
    const ms = Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]));
    const read = new Date(ms);
    // Date.UTC rolls 2025-02-31 over to March 3rd: only a day that reads back the same is real.
    if (read.getUTCFullYear() !== Number(date[1]) || read.getUTCMonth() + 1 !== Number(date[2]) || read.getUTCDate() !== Number(date[3])) {
      throw bad(param, `${value} is not a real day.`);
    }
    return param === 'end' ? ms + DAY_MS : ms;
  }
  const ms = INSTANT.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) throw bad(param, 'expected an ISO 8601 instant (2026-11-25T13:00:00Z), a UTC date (2026-11-25) or a time back from now (30m, 24h, 7d, 2w).');
  return ms;
}

const CONTROL = /[\u0000-\u001f\u007f]/;

function filter(params: URLSearchParams, name: 'key_id' | 'provider' | 'model'): string | undefined {
  const value = params.get(name) ?? undefined;
  if (value !== undefined && (value === '' || value.length > MAX_FILTER)) throw bad(name, `expected 1 to ${MAX_FILTER} characters.`);
  // No key, provider or model name holds one; PostgreSQL refuses a NUL outright (a 503, not a 400).
  if (value !== undefined && CONTROL.test(value)) throw bad(name, 'control characters are not part of any name.');
  return value;
}

function groups(report: ReportName, value: string | null): Dimension[] {
  if (value === null) return [...DEFAULT_GROUPS[report]];
  if (value === '' || value === 'none') return [];
  const allowed = DIMENSIONS[report];
  if (value.length > 100) throw bad('group_by', `expected a comma list of ${allowed.join(', ')}.`);
  const names = value.split(',').map((name) => name.trim());
  for (const name of names) {
    if (!allowed.includes(name as Dimension)) throw bad('group_by', `'${name.slice(0, 40)}' is not one of ${allowed.join(', ')}.`);
  }
  return [...new Set(names as Dimension[])];
}

export interface QueryBounds {
  now: number;
  /** Days hourly rollups are kept (MODELGATE_METRICS_HOURLY_RETENTION): hour buckets cover no longer a range. */
  hourlyRetentionDays: number;
}

export function parseAnalyticsQuery(report: ReportName, params: URLSearchParams, bounds: QueryBounds): AnalyticsQuery {
  const { now } = bounds;
  const endParam = params.get('end');
  const startParam = params.get('start');
  const end = endParam === null ? now : parseTime('end', endParam, now);
  const start = startParam === null ? end - DAY_MS : parseTime('start', startParam, now);
  if (start >= end) throw bad('start', "it is not before 'end'.");
  if (end - start > MAX_RANGE_DAYS * DAY_MS) throw bad('start', `a range covers at most ${MAX_RANGE_DAYS} days.`);

  const bucketParam = params.get('bucket');
  if (bucketParam !== null && bucketParam !== 'hour' && bucketParam !== 'day') throw bad('bucket', "expected 'hour' or 'day'.");
  const hourly = (from: number, to: number) => to - from <= bounds.hourlyRetentionDays * DAY_MS + HOUR_MS;
  const wholeHours = (from: number, to: number) => [from - (from % HOUR_MS), to % HOUR_MS === 0 ? to : to - (to % HOUR_MS) + HOUR_MS] as const;
  // Hour buckets for short ranges, unless the hourly rollups are kept for less than the range.
  const bucket: BucketSize = bucketParam ?? (end - start <= HOURLY_BY_DEFAULT_MS && hourly(...wholeHours(start, end)) ? 'hour' : 'day');
  const size = BUCKET_MS[bucket];
  // Whole buckets: the rollups hold nothing finer.
  const first = start - (start % size);
  const last = end % size === 0 ? end : end - (end % size) + size;
  const buckets = (last - first) / size;
  if (bucket === 'hour' && !hourly(first, last)) {
    throw bad('bucket', `hourly rollups are kept ${bounds.hourlyRetentionDays} days: use 'day' buckets for a longer range.`);
  }
  if (buckets > MAX_BUCKETS) throw bad('bucket', `the range holds ${buckets} buckets, at most ${MAX_BUCKETS}: use 'day' buckets or a shorter range.`);

  const groupBy = groups(report, params.get('group_by'));
  const limitParam = params.get('limit');
  let limit = Math.max(1, Math.min(DEFAULT_LIMIT, Math.floor(MAX_POINTS / buckets)));
  if (limitParam !== null) {
    if (!/^\d{1,4}$/.test(limitParam) || Number(limitParam) < 1 || Number(limitParam) > MAX_LIMIT) throw bad('limit', `expected an integer from 1 to ${MAX_LIMIT}.`);
    limit = Number(limitParam);
    if (groupBy.length > 0 && limit * buckets > MAX_POINTS) throw bad('limit', `${limit} groups × ${buckets} buckets is more than ${MAX_POINTS} points: fewer groups, 'day' buckets or a shorter range.`);
  }

  const formatParam = params.get('format') ?? 'json';
  if (formatParam !== 'json' && !(formatParam === 'csv' && CSV_REPORTS.includes(report))) {
    throw bad('format', CSV_REPORTS.includes(report) ? "expected 'json' or 'csv'." : "expected 'json' (csv is offered by the usage and costs reports).");
  }

  return { start: first, end: last, bucket, groupBy, keyId: filter(params, 'key_id'), provider: filter(params, 'provider'), model: filter(params, 'model'), limit, format: formatParam };
}
