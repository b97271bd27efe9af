// The /v1/analytics reports as plugins/cost/analytics-reports.ts and analytics-errors.ts write them:
// the range, bucket and grouping answered, totals, the largest groups and a series per bucket ×
// group, each report with its own measures.
import type { Schema } from '../types.js';

const count = { type: 'integer', minimum: 0 };
const usd = { type: 'number', minimum: 0 };
const rate = { type: 'number', minimum: 0, maximum: 1 };
const ms = { type: ['number', 'null'], minimum: 0 };
const nullableString = { type: ['string', 'null'] };

/** Fields of a group, whichever group_by named. */
const groupFields = {
  provider: { type: 'string', description: 'The provider that answered (a cache hit: the one whose answer it served again).' },
  model: { type: 'string', description: 'The catalog id of the model.' },
  key_id: { type: 'string' },
  status: { type: 'integer', description: 'The HTTP status answered.' },
  code: { type: 'string', description: 'The error code (errors report).' },
};

const usageMeasures = {
  requests: count,
  errors: count,
  cache_hits: count,
  prompt_tokens: count,
  completion_tokens: count,
  cached_tokens: count,
  total_tokens: count,
  upstream_calls: { ...count, description: 'Calls made to providers, retries and fallbacks included.' },
  retries: count,
  fallbacks: count,
};
const costMeasures = {
  requests: count,
  cache_hits: count,
  prompt_tokens: count,
  completion_tokens: count,
  cost_usd: usd,
  cost_nano: { ...count, description: 'The cost in nano-dollars (exact).' },
  saved_usd: { ...usd, description: 'What the cache hits would have cost.' },
  saved_nano: count,
};
const percentiles = (description: string) => ({
  type: 'object',
  description,
  required: ['mean', 'p50', 'p95', 'p99'],
  properties: { mean: ms, p50: ms, p95: ms, p99: ms, count },
});
const metricMeasures = {
  requests: count,
  error_rate: rate,
  cache_hit_ratio: rate,
  latency_ms: percentiles('Request latency; percentiles interpolated within the histogram bucket they fall in (null: no requests).'),
  ttft_ms: { type: 'object', required: ['mean', 'count'], properties: { mean: ms, count }, description: 'Time to first token of streamed requests.' },
  overhead_ms: percentiles("The gateway's own time per request that reached a provider (latency less upstream time and retry waits)."),
  tokens_per_second: { type: ['number', 'null'], minimum: 0, description: 'Completion tokens per second of generation (from the first token for streams).' },
};
const errorMeasures = {
  requests: count,
  errors: count,
  error_rate: rate,
  upstream_calls: count,
  retries: count,
  fallbacks: count,
  circuit_openings: { ...count, description: 'Times a failed call opened its provider\'s circuit breaker.' },
};

const frame = (name: string) => ({
  object: { const: `analytics.${name}` },
  start: { type: 'string', format: 'date-time', description: "The first bucket's start (the asked start, down to a whole bucket)." },
  end: { type: 'string', format: 'date-time', description: "The last bucket's end, exclusive (the asked end, up to a whole bucket)." },
  bucket: { enum: ['hour', 'day'] },
  group_by: { type: 'array', items: { enum: ['provider', 'model', 'key_id', 'status', 'code'] } },
  filters: {
    type: 'object',
    required: ['key_id', 'provider', 'model'],
    properties: { key_id: { ...nullableString, description: "A non-admin key's own id, always." }, provider: nullableString, model: nullableString },
  },
});
const FRAME_FIELDS = ['object', 'start', 'end', 'bucket', 'group_by', 'filters'];

const object = (properties: Record<string, Schema>, description?: string) => ({ type: 'object', ...(description ? { description } : {}), required: Object.keys(properties).filter((name) => !(name in groupFields)), properties });

interface Measures {
  totals: Record<string, Schema>;
  groups: Record<string, Schema>;
  series: Record<string, Schema>;
}

function report(name: string, measures: Measures, extra: Record<string, Schema> = {}): Schema {
  return {
    type: 'object',
    required: [...FRAME_FIELDS, 'totals', 'groups', 'groups_truncated', 'series', ...Object.keys(extra)],
    properties: {
      ...frame(name),
      totals: object(measures.totals, 'Over the whole range.'),
      groups: { type: 'array', description: 'Per group_by group over the whole range, the largest first (at most `limit`).', items: object({ ...groupFields, ...measures.groups }) },
      groups_truncated: { type: 'boolean', description: 'More groups matched than `limit`: the smaller ones (and their series) are left out.' },
      series: {
        type: 'array',
        description: 'Per bucket (and group, for the listed groups), oldest first; buckets without traffic are left out.',
        items: object({ bucket: { type: 'string', format: 'date-time' }, ...groupFields, ...measures.series }),
      },
      ...extra,
    },
  };
}

const same = (measures: Record<string, Schema>): Measures => ({ totals: measures, groups: measures, series: measures });

const budget = {
  type: 'object',
  required: ['period', 'limit_usd', 'spent_usd', 'used_ratio'],
  properties: { period: { type: 'string' }, limit_usd: usd, spent_usd: usd, used_ratio: { type: 'number', minimum: 0 } },
};

export const analyticsSchemas = {
  AnalyticsUsage: report('usage', same(usageMeasures)),
  AnalyticsCosts: report(
    'costs',
    same(costMeasures),
    { budgets: { type: 'object', description: "The gateway's budgets of the current periods: limit, spend and the share used.", required: ['day', 'week', 'month'], properties: { day: budget, week: budget, month: budget } } },
  ),
  AnalyticsErrors: report(
      'errors',
      { totals: errorMeasures, groups: { errors: count, share: { ...rate, description: "This group's share of all errors." } }, series: errorMeasures },
      {
        circuit_openings: { type: 'array', items: object({ provider: { type: 'string' }, model: { type: 'string' }, openings: count }) },
        top_messages: {
          type: 'array',
          description: 'The most frequent error messages (at most 10), redacted and anonymized, at most 200 characters.',
          items: object({ code: { type: 'string' }, message: { type: 'string' }, count }),
        },
      },
    ),
  AnalyticsMetrics: report('metrics', same(metricMeasures)),
} satisfies Record<string, Schema>;
