// The analytics reports' query params (every bad value a 400 naming its param), the histogram
// percentiles, and the CSV writer's quoting and formula neutralizing.
import t from 'tap';
import { startGateway, call, type TestGateway } from '../helpers/gateway.js';
import { checkError } from '../helpers/schema.js';
import Database from 'better-sqlite3';
import { testDataDir } from '../helpers/database.js';
import { parseAnalyticsQuery } from '../../plugins/cost/analytics-params.js';
import { percentile } from '../../plugins/cost/analytics-percentiles.js';
import { csvField, toCsv } from '../../plugins/cost/analytics-csv.js';
import { LATENCY_BOUNDS } from '../../plugins/cost/rollups.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = Date.parse('2026-11-26T10:30:00Z');
const parse = (query: string, report: 'usage' | 'costs' | 'errors' | 'metrics' = 'usage') => parseAnalyticsQuery(report, new URLSearchParams(query), { now: NOW, hourlyRetentionDays: 30 });

t.test('defaults: the last 24 hours in hour buckets, widened to whole buckets', async (t) => {
  const query = parse('');
  t.equal(query.bucket, 'hour');
  t.equal(query.start, Date.parse('2026-11-25T10:00:00Z'));
  t.equal(query.end, Date.parse('2026-11-26T11:00:00Z'));
  t.same(query.groupBy, []);
  t.equal(query.format, 'json');
  t.same(parse('', 'costs').groupBy, ['provider', 'model']);
  t.same(parse('', 'errors').groupBy, ['code']);
});

t.test('start and end: instants, dates (end inclusive), times back from now', async (t) => {
  t.equal(parse('start=2026-11-20&end=2026-11-21').start, Date.parse('2026-11-20T00:00:00Z'));
  t.equal(parse('start=2026-11-20&end=2026-11-21').end, Date.parse('2026-11-22T00:00:00Z'), 'the end day is included');
  t.equal(parse('start=2026-11-20&end=2026-11-21').bucket, 'hour', 'two whole days: 48 hours, hour buckets');
  t.equal(parse('start=2026-11-20&end=2026-11-22').bucket, 'day', 'over 48 hours: day buckets');
  t.equal(parse('start=30m').start, Date.parse('2026-11-26T10:00:00Z'));
  t.equal(parse('start=7d&bucket=hour').start, NOW - 7 * DAY - 30 * 60_000);
  t.equal(parse('start=2026-11-26T08:15:00Z&end=2026-11-26T09:45:00%2B01:00').end, Date.parse('2026-11-26T09:00:00Z'));
  t.equal(parse('start=48h').bucket, 'hour', '48 hours: still hour buckets');
  t.same(parse('group_by=key,model,key').groupBy, ['key', 'model'], 'duplicates dropped');
  t.equal(parse('group_by=').groupBy.length, 0);
  t.equal(parse('start=20d&bucket=hour').limit, Math.floor(20_000 / (20 * 24 + 1)), 'the default limit keeps the series bounded');
});

const REFUSED: Array<[string, string, string?]> = [
  ['start=yesterday', 'start'],
  ['start=2026-02-30', 'start'],
  ['start=2026-11-26T10:00:00', 'start'],
  [`start=${'1'.repeat(65)}`, 'start'],
  ['end=5x', 'end'],
  ['start=2026-11-26&end=2026-11-25', 'start'],
  ['start=401d', 'start'],
  ['bucket=week', 'bucket'],
  ['start=40d&bucket=hour', 'bucket'],
  ['group_by=tenant', 'group_by'],
  ['group_by=code', 'group_by'],
  [`group_by=${'model,'.repeat(30)}`, 'group_by'],
  ['limit=0', 'limit'],
  ['limit=1001', 'limit'],
  ['limit=ten', 'limit'],
  ['start=20d&bucket=hour&group_by=model&limit=1000', 'limit'],
  ['format=xml', 'format'],
  ['format=csv', 'format', 'errors'],
  ['key_id=', 'key_id'],
  [`model=${'m'.repeat(201)}`, 'model'],
  ['provider=', 'provider'],
];

t.test('every bad value is refused, naming its param', async (t) => {
  for (const [query, param, report] of REFUSED) {
    t.throws(() => parse(query, (report ?? 'usage') as 'usage'), { kind: 'bad_request', param } as unknown as Error, query);
  }
  t.doesNotThrow(() => parse('group_by=code', 'errors'));
  t.doesNotThrow(() => parse('format=csv', 'costs'));
  t.doesNotThrow(() => parse('unknown=1&start=400d'), 'unknown params are ignored, as /v1/usage does; 400 days are allowed');
});

t.test('junk in any param is a 400 naming a param or a valid query, never another error', async (t) => {
  let seed = 7;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
  const pieces = ['', '-', '1', '24h', '7d', '0m', 'now', 'hour', 'day', 'key', 'model', ',', ' ', '=', 'T', 'Z', ':', '2026-11-25', '9999', '\u0000', '%', 'é', 'x'.repeat(300)];
  const names = ['start', 'end', 'bucket', 'group_by', 'limit', 'format', 'key_id', 'provider', 'model'];
  for (let i = 0; i < 3000; i++) {
    const params = new URLSearchParams();
    for (const name of names) {
      if (next() % 3 !== 0) continue;
      params.set(name, Array.from({ length: next() % 4 }, () => pieces[next() % pieces.length]).join(''));
    }
    try {
      const query = parseAnalyticsQuery((['usage', 'costs', 'errors', 'metrics'] as const)[i % 4], params, { now: NOW, hourlyRetentionDays: 30 });
      if (!(query.start < query.end && (query.end - query.start) / 3_600_000 <= 400 * 24 + 24 && query.limit >= 1 && query.limit <= 1000)) t.fail(`out of bounds: ${params}`);
    } catch (error) {
      const refusal = error as { kind?: string; param?: string };
      if (refusal.kind !== 'bad_request' || !names.includes(refusal.param ?? '')) t.fail(`${params}: ${String(error)}`);
    }
  }
  t.pass('3,000 random queries: each parsed within bounds or refused with its param');
});

t.test('through the gateway: a 400 with the OpenAI error body', async (t) => {
  const gateway: TestGateway = await startGateway();
  t.teardown(() => gateway.close());
  for (const [query, param, report] of REFUSED.slice(0, 8)) {
    const answer = await call(gateway.url, `/analytics/${report ?? 'metrics'}?${query}`);
    t.equal(answer.status, 400, query);
    t.equal(checkError(answer.json), null);
    t.match(answer.json.error, { type: 'invalid_request_error', code: 'invalid_request', param });
  }
  const empty = await call(gateway.url, '/analytics/errors');
  t.equal(empty.status, 200);
  t.match(empty.json, { totals: { requests: 0, errors: 0, error_rate: 0, circuit_openings: 0 }, groups: [], series: [], top_messages: [] });
});

t.test('a database that does not answer: 503 analytics_unavailable with Retry-After, not 500', async (t) => {
  const dataDir = testDataDir();
  const gateway: TestGateway = await startGateway({ MODELGATE_DATA_DIR: dataDir });
  t.teardown(() => gateway.close());
  // Another process's handle on the gateway's database: it takes the rollups away.
  const other = new Database(`${dataDir}/modelgate.db`);
  t.teardown(() => other.close());
  other.exec('alter table usage_hourly_models rename to usage_hourly_models_away');
  for (const report of ['usage', 'costs', 'errors', 'metrics']) {
    const away = await call(gateway.url, `/analytics/${report}`);
    t.equal(away.status, 503, report);
    t.equal(checkError(away.json), null);
    t.match(away.json.error, { type: 'service_unavailable_error', code: 'analytics_unavailable' });
    t.equal(away.headers.get('retry-after'), '5');
  }
  other.exec('alter table usage_hourly_models_away rename to usage_hourly_models');
  t.equal((await call(gateway.url, '/analytics/usage')).status, 200, 'answered again');
});

t.test('percentiles are interpolated within the histogram bucket they fall in', async (t) => {
  const counts = (entries: Record<number, number>) => LATENCY_BOUNDS.map((_, i) => entries[i] ?? 0).concat(entries[LATENCY_BOUNDS.length] ?? 0);
  t.equal(percentile(counts({}), LATENCY_BOUNDS, 0.5), null, 'no requests: no percentile');
  t.equal(percentile(counts({ 0: 10 }), LATENCY_BOUNDS, 0.5), 50, 'half of (0, 100]');
  t.equal(percentile(counts({ 0: 10 }), LATENCY_BOUNDS, 0.95), 95);
  // 50 in (0,100], 50 in (100,250]: p50 is the top of the first, p95 90% into the second.
  t.equal(percentile(counts({ 0: 50, 1: 50 }), LATENCY_BOUNDS, 0.5), 100);
  t.equal(percentile(counts({ 0: 50, 1: 50 }), LATENCY_BOUNDS, 0.95), 235);
  t.equal(percentile(counts({ 0: 98, 4: 2 }), LATENCY_BOUNDS, 0.99), 1750, 'half-way into (1000, 2500]');
  t.equal(percentile(counts({ 0: 1, 9: 99 }), LATENCY_BOUNDS, 0.99), 60_000, 'the open last bucket reads as its lower bound');
  t.equal(percentile([0, 0, 4], [10, 20], 0.5), 20);
});

t.test('CSV: quoted where needed, formulas neutralized', async (t) => {
  t.equal(csvField('gpt-4o'), 'gpt-4o');
  t.equal(csvField('a,b'), '"a,b"');
  t.equal(csvField('say "hi"'), '"say ""hi"""');
  t.equal(csvField('line\nbreak'), '"line\nbreak"');
  t.equal(csvField('=HYPERLINK("http://evil")'), '"\'=HYPERLINK(""http://evil"")"');
  t.equal(csvField('+1'), "'+1");
  t.equal(csvField('-2'), "'-2");
  t.equal(csvField('@SUM(A1)'), "'@SUM(A1)");
  t.equal(csvField('\tx'), "'\tx");
  t.equal(csvField(-3), '-3', 'numbers are numbers');
  t.equal(csvField(null), '');
  t.equal(toCsv(['bucket', 'model', 'requests'], [{ bucket: '2026-11-26T10:00:00.000Z', model: '=1+1', requests: 2 }]), "bucket,model,requests\r\n2026-11-26T10:00:00.000Z,'=1+1,2\r\n");
});

t.end();

t.test('review: control characters in a filter are a 400 naming it (PostgreSQL refused a NUL with a 503)', async (t) => {
  for (const name of ['key_id', 'provider', 'model']) {
    t.throws(() => parse(`${name}=a%00b`), { kind: 'bad_request', param: name } as unknown as Error, name);
    t.throws(() => parse(`${name}=a%0Ab`), { kind: 'bad_request', param: name } as unknown as Error, name);
  }
});

t.test('review: the default bucket is day when hourly rollups are kept for less than the range', async (t) => {
  const short = (query: string) => parseAnalyticsQuery('usage', new URLSearchParams(query), { now: NOW, hourlyRetentionDays: 1 });
  t.equal(short('start=36h').bucket, 'day');
  t.equal(short('start=12h').bucket, 'hour');
  t.throws(() => short('start=36h&bucket=hour'), { kind: 'bad_request', param: 'bucket' } as unknown as Error, 'asked for: refused');
});
