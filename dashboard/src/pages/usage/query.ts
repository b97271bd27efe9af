// The Usage page's controls as they live in the hash (`#/usage?start=7d&group_by=model`), so a link
// keeps them, and as the analytics API takes them (docs/analytics.md).
import { navigate } from '../../router.js';

export const PRESETS = [
  { value: '24h', label: 'Last 24 hours' },
  { value: '7d', label: 'Last 7 days' },
  { value: '30d', label: 'Last 30 days' },
] as const;

export const GROUPINGS = [
  { value: 'provider', label: 'Provider' },
  { value: 'model', label: 'Model' },
  { value: 'key', label: 'Key' },
  { value: 'none', label: 'None (all traffic)' },
] as const;

export interface UsageQuery {
  /** A preset (`24h`, `7d`, `30d`) or a UTC date. */
  start: string;
  /** A UTC date (inclusive) with a date start; empty for now. */
  end: string;
  /** `hour`, `day` or empty (the API picks). */
  bucket: string;
  /** `provider`, `model`, `key` or `none`. */
  group_by: string;
  key_id: string;
  provider: string;
  model: string;
}

export function readQuery(query: URLSearchParams): UsageQuery {
  const value = (name: string) => query.get(name)?.trim() ?? '';
  return {
    start: value('start') || '24h',
    end: value('end'),
    bucket: value('bucket'),
    group_by: value('group_by') || 'provider',
    key_id: value('key_id'),
    provider: value('provider'),
    model: value('model'),
  };
}

export const isPreset = (start: string) => PRESETS.some((preset) => preset.value === start);

/** Puts the controls into the hash; the page reads them back from there. */
export function showQuery(next: UsageQuery): void {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(next)) if (value) kept[name] = value;
  if (isPreset(next.start)) delete kept.end;
  navigate('/usage', kept);
}

/** The analytics API's query for the controls (`group_by=` empty asks for no grouping). */
export function apiQuery(query: UsageQuery, format?: 'csv'): string {
  const params = new URLSearchParams({ start: query.start, group_by: query.group_by === 'none' ? '' : query.group_by });
  if (!isPreset(query.start) && query.end) params.set('end', query.end);
  for (const name of ['bucket', 'key_id', 'provider', 'model'] as const) if (query[name]) params.set(name, query[name]);
  if (format) params.set('format', format);
  return params.toString();
}

/** A UTC date `days` before today, YYYY-MM-DD. */
export function utcDate(daysAgo = 0): string {
  return new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
}
