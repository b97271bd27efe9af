// The analytics reports (plugins/cost/analytics-routes.ts): usage, costs, errors and performance
// over a range of hour or day buckets, read from the rollups. docs/analytics.md says more.
import { headers, RATE_LIMIT_HEADERS } from '../headers.js';
import { keyedErrors, keyedRefusal } from '../responses.js';
import type { MediaType, PathItem } from '../types.js';

type Report = 'usage' | 'costs' | 'errors' | 'metrics';

const query = (name: string, description: string, schema: Record<string, unknown> = { type: 'string' }) => ({ name, in: 'query' as const, description, schema });
const time = { type: 'string', maxLength: 64 };
const filter = { type: 'string', minLength: 1, maxLength: 200 };

function parameters(report: Report) {
  const dimensions = report === 'errors' ? 'provider, model, key, status, code' : 'provider, model, key, status';
  const defaults: Record<Report, string> = { usage: 'none', costs: '`provider,model`', errors: '`code`', metrics: '`provider,model`' };
  return [
    query('start', 'Start of the range: an ISO 8601 instant with its offset (2026-11-25T13:00:00Z), a UTC date (its first instant) or a time back from now (30m, 24h, 7d, 2w). Default: 24 hours before `end`. Widened down to a whole bucket.', time),
    query('end', 'End of the range (exclusive): the same forms, or `now`; a date includes its day. Default: now. Widened up to a whole bucket. A range covers at most 400 days.', time),
    query('bucket', 'Bucket size: `hour` (hourly rollups; refused over ranges longer than their retention, MODELGATE_METRICS_HOURLY_RETENTION days) or `day`. Default: hour for ranges up to 48 hours, day beyond. At most 2,000 buckets.', { enum: ['hour', 'day'] }),
    query('group_by', `A comma list of ${dimensions}; empty for none. Default: ${defaults[report]}.`, { type: 'string', maxLength: 100 }),
    query('limit', 'Groups listed, largest first (the series covers these only): 1 to 1000; default 100, fewer when the range holds many buckets. Groups × buckets is at most 20,000.', { type: 'integer', minimum: 1, maximum: 1000 }),
    query('key_id', "Only this key's traffic. An admin key may name any key; another key only itself (else 403 admin_required): its own is always forced.", filter),
    query('provider', "Only this provider's traffic.", filter),
    query('model', "Only this model's traffic (its catalog id).", filter),
    ...(report === 'usage' || report === 'costs' ? [query('format', '`json` (default) or `csv`: a header row and one row per bucket × group of the series.', { enum: ['json', 'csv'] })] : []),
    { $ref: '#/components/parameters/RequestId' },
  ];
}

const SUMMARIES: Record<Report, [string, string, string]> = {
  usage: ['getAnalyticsUsage', 'Usage report', 'Requests, errors, cache hits, tokens (prompt, completion, cached), upstream calls, retries and fallbacks per bucket and group, with totals.'],
  costs: ['getAnalyticsCosts', 'Cost breakdown', 'Cost (USD and nano-dollars) per bucket and provider/model (and key, status), with totals, what the cache saved, and the budgets of the current periods.'],
  errors: [
    'getAnalyticsErrors',
    'Error analysis',
    'Errors and the error rate per bucket, errors per status, code, provider, model or key, retries, fallbacks, circuit-breaker openings per provider and model, and the most frequent error messages (redacted and anonymized). The error tables are hourly: they cover the last MODELGATE_METRICS_HOURLY_RETENTION days.',
  ],
  metrics: [
    'getAnalyticsMetrics',
    'Performance metrics',
    'Latency (mean, p50, p95, p99), time to first token, gateway overhead (mean and percentiles), tokens per second, cache hit and error rates per provider/model. Percentiles come from the rollups\' histograms, interpolated linearly within the bucket they fall in.',
  ],
};

function path(report: Report): PathItem {
  const [operationId, summary, description] = SUMMARIES[report];
  const schema = { $ref: `#/components/schemas/Analytics${report[0]!.toUpperCase()}${report.slice(1)}` };
  const csv: Record<string, MediaType> = report === 'usage' || report === 'costs' ? { 'text/csv': { schema: { type: 'string', description: 'RFC 4180 CSV; text fields that start with = + - @ are prefixed with a single quote.' } } } : {};
  return {
    get: {
      operationId,
      tags: ['Analytics'],
      summary,
      description: `${description} Read from the rollups only. A non-admin key sees its own traffic only; an admin key sees every key's.`,
      parameters: parameters(report),
      responses: {
        '200': { description: 'The report.', headers: headers(...RATE_LIMIT_HEADERS), content: { 'application/json': { schema }, ...csv } },
        '400': keyedRefusal('A query param has a bad value (code invalid_request, `param` names it): a time that does not parse, a start not before the end, a range over 400 days, hour buckets over a range longer than their retention, over 2,000 buckets, an unknown group_by dimension, a limit out of bounds, an empty or too long filter, an unknown format.'),
        ...keyedErrors({
          '403': keyedRefusal("A non-admin key asked for another key's traffic (code admin_required, param key_id), or the IP filter refuses this client (code ip_not_allowed)."),
          '503': keyedRefusal('The database does not answer (code analytics_unavailable), the budget store (costs; code store_unavailable), or the rate-limit store with MODELGATE_RATE_LIMIT_REDIS_FAILURE=refuse.', 'retry-after'),
        }),
      },
    },
  };
}

export const analyticsPaths: Record<string, PathItem> = Object.fromEntries((['usage', 'costs', 'errors', 'metrics'] as const).map((report) => [`/v1/analytics/${report}`, path(report)]));
