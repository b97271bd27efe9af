// GET /v1/analytics/* on both engines, against real requests through the gateway: two providers
// and two models, two non-admin keys and the admin, a cache hit, a refused request whose message
// holds an e-mail address and a secret, and a request that fails twice on one provider (a retry,
// the circuit opening) and falls back to the other. Every number asserted here follows from those
// requests and the catalog's prices.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, call, type TestGateway } from '../helpers/gateway.js';
import { openAIResponder, PROVIDER_KEYS } from '../helpers/fakes.js';
import { FakeProvider, json, type Responder } from '../helpers/fake-provider.js';
import { ENGINES, engineEnv } from '../helpers/database.js';
import { checkError } from '../helpers/schema.js';
import { keyStore } from '../helpers/keys.js';
import { LATENCY_BOUNDS } from '../../plugins/cost/rollups.js';

const ALPHA = 'uc_alpha_key_0123456789abcdefgh';
const BETA = 'uc_beta_key_0123456789abcdefghi';
const ALPHA_ID = 'alpha_key_0123456789abcdefgh';
const BETA_ID = 'beta_key_0123456789abcdefghi';
const keys = keyStore({ [ALPHA]: { tenant: 'acme' }, [BETA]: { tenant: 'acme' } });

/** USD per token: duo on openai, duo on custom, solo (custom only). The fakes report 24 + 8 tokens. */
const PRICES = { openaiDuo: 1e-6, customDuo: 2e-6, solo: 3e-6 };
const TOKENS = 32;
const nano = (usdPerToken: number) => Math.round(usdPerToken * TOKENS * 1e9);

function catalog(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'modelgate-analytics-')), 'models.json');
  const entry = (provider: string, id: string, native: string, price: number) => ({ provider, id, native_id: native, price: { input: price, output: price }, quality: { score: 0.9 } });
  const models = [
    entry('openai', 'duo', 'gpt-4o-mini', PRICES.openaiDuo),
    entry('custom', 'duo', 'llama', PRICES.customDuo),
    entry('custom', 'solo', 'llama', PRICES.solo),
    // A name a spreadsheet would run as a formula.
    entry('custom', FORMULA, 'llama', PRICES.solo),
  ];
  writeFileSync(file, JSON.stringify({ models }));
  return file;
}

const FORMULA = '=HYPERLINK("http://evil.example","x"),1';
const LEAKY = 'Invalid prompt from bob@example.com, key sk-proj-abcdefghijklmnopqrstuvwxyz012345';
const refused: Responder = json(400, { error: { message: LEAKY, type: 'invalid_request_error', param: null, code: null } });
const serverError: Responder = json(500, { error: { message: 'The server had an error', type: 'server_error', param: null, code: null } });

const ask = (model: string, content: string, extra: Record<string, unknown> = {}) => JSON.stringify({ model, messages: [{ role: 'user', content }], ...extra });

for (const engine of ENGINES) {
  t.test(`${engine}: the analytics reports count what went through the gateway`, async (t) => {
    const openai = await FakeProvider.start(openAIResponder(PROVIDER_KEYS.openai));
    const custom = await FakeProvider.start(openAIResponder(PROVIDER_KEYS.custom));
    const gateway: TestGateway = await startGateway(
      {
        ...engineEnv(engine),
        OPENAI_API_KEY: PROVIDER_KEYS.openai,
        OPENAI_BASE_URL: `${openai.url}/v1`,
        CUSTOM_API_KEY: PROVIDER_KEYS.custom,
        CUSTOM_BASE_URL: `${custom.url}/v1`,
        MODELGATE_MODEL_CATALOG: catalog(),
        MODELGATE_RETRIES: '1',
        MODELGATE_RETRY_DELAY: '10',
        MODELGATE_FAILOVER_DELAY: '0',
        MODELGATE_CIRCUIT_BREAKER_THRESHOLD: '2',
        MODELGATE_CIRCUIT_BREAKER_TIMEOUT: '600000',
        MODELGATE_LEDGER_FLUSH_INTERVAL: '60000',
      },
      { keyStores: [keys] },
    );
    t.teardown(async () => {
      await gateway.close();
      await openai.close();
      await custom.close();
    });
    const send = async (key: string, body: string) => (await call(gateway.url, '/chat/completions', { key, body })).status;

    // alpha: duo twice on openai (one streamed), the first again from the cache, solo refused by custom.
    // Each is timed as the client saw it: the gateway's latency is within that.
    const duoMs: number[] = [];
    const timed = async (key: string, body: string) => {
      const started = performance.now();
      const status = await send(key, body);
      duoMs.push(performance.now() - started);
      return status;
    };
    t.equal(await timed(ALPHA, ask('duo', 'one')), 200);
    t.equal(await timed(ALPHA, ask('duo', 'two', { stream: true, stream_options: { include_usage: true } })), 200);
    t.equal(await timed(ALPHA, ask('duo', 'one')), 200, 'a cache hit');
    custom.next(refused);
    t.equal(await send(ALPHA, ask('solo', 'three')), 400, 'refused by the provider');
    // beta: solo on custom; duo fails twice on openai (a retry; the second failure opens its circuit), then custom answers.
    t.equal(await send(BETA, ask('solo', 'four')), 200);
    openai.next(serverError, serverError);
    t.equal(await send(BETA, ask('duo', 'five')), 200, 'answered by the fallback');
    t.equal(openai.requests.length, 4, 'openai got two answers and two failing calls');

    const get = (path: string, key?: string) => call(gateway.url, `/analytics/${path}`, { key });

    t.test('usage: totals, per provider and model, per key, filtered', async (t) => {
      const usage = await get('usage?group_by=provider,model');
      t.equal(usage.status, 200);
      t.match(usage.json, { object: 'analytics.usage', bucket: 'hour', group_by: ['provider', 'model'], filters: { key_id: null } });
      t.match(usage.json.totals, { requests: 6, errors: 1, cache_hits: 1, prompt_tokens: 24 * 5, completion_tokens: 8 * 5, retries: 1, fallbacks: 1, upstream_calls: 7 });
      const groups = Object.fromEntries(usage.json.groups.map((g: any) => [`${g.provider}/${g.model}`, g.requests]));
      // A cache hit counts to the provider and model whose answer it served again.
      t.same(groups, { 'openai/duo': 3, 'custom/solo': 2, 'custom/duo': 1 });
      t.same(usage.json.groups.map((g: any) => g.requests), [3, 2, 1], 'largest first');
      const series = usage.json.series.reduce((sum: number, row: any) => sum + row.requests, 0);
      t.equal(series, 6, 'the series adds up to the totals');
      t.ok(usage.json.series.every((row: any) => row.bucket.endsWith(':00:00.000Z')), 'hour buckets');

      const byKey = await get('usage?group_by=key');
      t.same(Object.fromEntries(byKey.json.groups.map((g: any) => [g.key_id, g.requests])), { [ALPHA_ID]: 4, [BETA_ID]: 2 });
      const custom = await get('usage?provider=custom&group_by=model');
      t.equal(custom.json.totals.requests, 3);
      t.same(custom.json.groups.map((g: any) => [g.model, g.requests]), [['solo', 2], ['duo', 1]]);
      t.same((await get('usage?group_by=status')).json.groups.map((g: any) => [g.status, g.requests]), [[200, 5], [400, 1]]);
      const byStatus = await get(`usage?group_by=status&key_id=${ALPHA_ID}`);
      t.same(byStatus.json.groups.map((g: any) => [g.status, g.requests]), [[200, 3], [400, 1]]);
      const day = await get('usage?start=7d&bucket=day');
      t.equal(day.json.bucket, 'day');
      t.equal(day.json.totals.requests, 6);
      t.ok(day.json.series.every((row: any) => row.bucket.endsWith('T00:00:00.000Z')), 'day buckets');
      const before = await get('usage?start=2020-01-01&end=2020-01-31');
      t.equal(before.json.totals.requests, 0, 'a range without traffic counts nothing');
      t.equal(before.json.bucket, 'day', 'day buckets by default beyond 48 hours');
    });

    t.test('a non-admin key sees its own traffic only', async (t) => {
      const alpha = await get('usage?group_by=key,provider', ALPHA);
      t.equal(alpha.status, 200);
      t.equal(alpha.json.totals.requests, 4);
      t.equal(alpha.json.filters.key_id, ALPHA_ID, 'its key_id is forced');
      t.ok(alpha.json.groups.every((g: any) => g.key_id === ALPHA_ID));
      const beta = await get('costs', BETA);
      t.equal(beta.json.totals.cost_nano, nano(PRICES.solo) + nano(PRICES.customDuo));
      for (const report of ['usage', 'costs', 'errors', 'metrics']) {
        const other = await get(`${report}?key_id=${BETA_ID}`, ALPHA);
        t.equal(other.status, 403, `${report}: another key's traffic is refused`);
        t.equal(checkError(other.json), null);
        t.match(other.json.error, { code: 'admin_required', param: 'key_id' });
      }
      t.equal((await get(`usage?key_id=${ALPHA_ID}`, ALPHA)).json.totals.requests, 4, 'it may name itself');
      t.equal((await get(`errors?key_id=${BETA_ID}`)).json.totals.requests, 2, "an admin may name any key");
    });

    t.test('costs: per provider and model, per key, the budget used and what the cache saved', async (t) => {
      const costs = await get('costs');
      t.equal(costs.status, 200);
      t.same(costs.json.group_by, ['provider', 'model'], 'grouped by provider and model by default');
      const total = 2 * nano(PRICES.openaiDuo) + nano(PRICES.solo) + nano(PRICES.customDuo);
      t.equal(costs.json.totals.cost_nano, total);
      t.equal(costs.json.totals.saved_nano, nano(PRICES.openaiDuo), 'the cache hit saved what its answer cost');
      t.equal(costs.json.totals.cost_usd, total / 1e9);
      t.same(
        costs.json.groups.map((g: any) => [g.provider, g.model, g.cost_nano]),
        [
          ['custom', 'solo', nano(PRICES.solo)],
          ['custom', 'duo', nano(PRICES.customDuo)],
          ['openai', 'duo', 2 * nano(PRICES.openaiDuo)],
        ],
        'costliest first, then by name',
      );
      t.equal(costs.json.budgets.day.spent_usd, total / 1e9, "the day's budget used");
      t.ok(costs.json.budgets.day.used_ratio > 0);
      t.match(costs.json.budgets, { week: { period: /^\d{4}-W\d{2}$/ }, month: { period: /^\d{4}-\d{2}$/ } });
      const byKey = await get('costs?group_by=key,model&limit=1');
      t.equal(byKey.json.groups.length, 1);
      t.equal(byKey.json.groups_truncated, true);
      t.match(byKey.json.groups[0], { key_id: BETA_ID, model: 'solo', cost_nano: nano(PRICES.solo) });
      t.ok(byKey.json.series.every((row: any) => row.key_id === BETA_ID && row.model === 'solo'), 'the series covers the listed groups only');
    });

    t.test('costs and usage as CSV: a header and a row per bucket and group', async (t) => {
      const csv = await get('costs?format=csv&group_by=provider,model');
      t.equal(csv.status, 200);
      t.match(csv.headers.get('content-type'), /^text\/csv/);
      const lines = csv.text.trimEnd().split('\r\n');
      t.equal(lines[0], 'bucket,provider,model,requests,cache_hits,prompt_tokens,completion_tokens,cost_usd,cost_nano,saved_usd,saved_nano');
      const json = await get('costs?group_by=provider,model');
      t.equal(lines.length - 1, json.json.series.length, 'one row per bucket and group');
      t.ok(lines.length - 1 >= 3);
      const rows = lines.slice(1).map((line) => line.split(','));
      t.equal(
        rows.reduce((sum, row) => sum + Number(row[8]), 0),
        2 * nano(PRICES.openaiDuo) + nano(PRICES.solo) + nano(PRICES.customDuo),
      );
      const usage = await get('usage?format=csv', ALPHA);
      t.match(usage.text, /^bucket,requests,errors,/);
      t.equal((await get('metrics?format=csv')).json.error.param, 'format', 'metrics has no CSV');
    });

    t.test('errors: rate, codes, retries, fallbacks, circuit openings and scrubbed messages', async (t) => {
      const errors = await get('errors');
      t.equal(errors.status, 200);
      t.match(errors.json.totals, { requests: 6, errors: 1, retries: 1, fallbacks: 1, circuit_openings: 1, upstream_calls: 7 });
      t.equal(errors.json.totals.error_rate, Math.round((1 / 6) * 10000) / 10000);
      t.equal(errors.json.groups.length, 1);
      t.match(errors.json.groups[0], { errors: 1, share: 1 });
      t.same(errors.json.circuit_openings, [{ provider: 'openai', model: 'duo', openings: 1 }]);
      const [top] = errors.json.top_messages;
      t.equal(top.count, 1);
      t.notMatch(top.message, /bob@example\.com/, 'no e-mail address');
      t.notMatch(top.message, /sk-proj-abc/, 'no secret');
      t.match(top.message, /anon_[0-9a-f]{16}/);
      t.ok(top.message.length <= 200);
      const grouped = await get('errors?group_by=provider,model,status,key');
      t.same(grouped.json.groups.map((g: any) => [g.provider, g.model, g.status, g.key_id, g.errors]), [['custom', 'solo', 400, ALPHA_ID, 1]]);
      const beta = await get('errors', BETA);
      t.match(beta.json.totals, { requests: 2, errors: 0, circuit_openings: 1, fallbacks: 1 }, "the opening is counted to the key whose call opened it");
      t.same(beta.json.top_messages, []);
      t.equal((await get('errors?provider=custom')).json.totals.circuit_openings, 0, 'filtered by provider');
    });

    t.test('metrics: latency percentiles, time to first token, overhead, tokens per second, cache hit ratio', async (t) => {
      const metrics = await get('metrics');
      t.equal(metrics.status, 200);
      const openaiDuo = metrics.json.groups.find((g: any) => g.provider === 'openai' && g.model === 'duo');
      t.equal(openaiDuo.requests, 3);
      t.equal(openaiDuo.ttft_ms.count, 1, 'the streamed request');
      t.ok(openaiDuo.ttft_ms.mean >= 0);
      if (Math.max(...duoMs) < 100) {
        // All three in the first range (0, 100 ms], interpolated as Prometheus does: rank p × 3 of 3.
        t.strictSame([openaiDuo.latency_ms.p50, openaiDuo.latency_ms.p95, openaiDuo.latency_ms.p99], [50, 95, 99], 'interpolated within the first range');
      } else {
        // A slow host: some request took longer than the first range; each percentile is still within the range of the slowest.
        const bound = LATENCY_BOUNDS.find((upper) => upper >= Math.max(...duoMs)) ?? Infinity;
        for (const p of ['p50', 'p95', 'p99']) t.ok(openaiDuo.latency_ms[p] > 0 && openaiDuo.latency_ms[p] <= bound, `latency ${p} within ${bound} ms`);
      }
      t.ok(openaiDuo.latency_ms.p50 <= openaiDuo.latency_ms.p95 && openaiDuo.latency_ms.p95 <= openaiDuo.latency_ms.p99);
      t.ok(openaiDuo.overhead_ms.p95 !== null);
      t.ok(openaiDuo.tokens_per_second > 0);
      t.equal(openaiDuo.cache_hit_ratio, Math.round((1 / 3) * 10000) / 10000);
      t.equal(openaiDuo.overhead_ms.count, 2, 'the cache hit reached no provider: no overhead counted');
      t.equal(metrics.json.totals.cache_hit_ratio, Math.round((1 / 6) * 10000) / 10000);
      t.equal(metrics.json.totals.error_rate, Math.round((1 / 6) * 10000) / 10000);
    });

    t.test('CSV: a model name that reads as a formula is neutralized and quoted', async (t) => {
      t.equal(await send(BETA, ask(FORMULA, 'six')), 200);
      const csv = await get(`usage?format=csv&group_by=model&key_id=${BETA_ID}`);
      const row = csv.text.split('\r\n').find((line) => line.includes('HYPERLINK'));
      t.ok(row?.includes(`,"'=HYPERLINK(""http://evil.example"",""x""),1",`), `quoted, a single quote first: ${row}`);
      t.equal((await get(`usage?group_by=model&key_id=${BETA_ID}`)).json.groups.find((g: any) => g.model === FORMULA)?.requests, 1, 'JSON keeps the name as it is');
    });
  });
}

t.end();
