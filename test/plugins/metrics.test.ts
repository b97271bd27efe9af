// Prometheus metrics, end to end: known traffic through the real gateway (fake OpenAI upstream, the
// OpenAI SDK and raw HTTP as clients), then GET /metrics parsed as Prometheus would read it.
import t, { type Test } from 'tap';
import { startGateway, call, GATEWAY_KEY, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { fixture, fixtureJson, json, sleep, sse, type FakeProvider } from '../helpers/fake-provider.js';
import { scrape, type Sample } from '../helpers/metrics.js';
import { GatewayError } from '../../core/errors.js';
import { newOutcome, type RequestContext } from '../../core/context.js';

let upstream: FakeProvider;
t.before(async () => {
  upstream = await startFakeOpenAI();
});
t.after(() => upstream.close());
t.beforeEach(() => upstream.reset());

// One attempt per request whatever the failover defaults, so the counts below are exact.
const start = (env: Record<string, string> = {}) =>
  startGateway({ OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_RETRIES: '0', MODELGATE_FAILOVER_ENABLED: 'false', ...env });

const ask = (question: string, model = 'gpt-4o-mini') => ({ model, messages: [{ role: 'user' as const, content: question }] });
const CHAT = 'POST /v1/chat/completions';

/** The samples of a family as {labels, value}, in a stable order, for exact comparison. */
const table = (samples: Array<Pick<Sample, 'labels' | 'value'>>) =>
  samples.map(({ labels, value }) => ({ labels, value })).sort((a, b) => JSON.stringify(a.labels).localeCompare(JSON.stringify(b.labels)));
const series = (labels: Record<string, string>, value: number) => ({ labels, value });

async function send(t: Test, gateway: TestGateway) {
  await gateway.client().chat.completions.create(ask('Count me'));
  await gateway.client().chat.completions.create(ask('Count me')); // a cache hit
  const stream = await gateway.client().chat.completions.create({ ...ask('Stream me'), stream: true });
  for await (const _chunk of stream);
  await call(gateway.url, '/chat/completions', { body: JSON.stringify(ask('Wrong key')), key: 'uc_wrong_key_1234' });
  upstream.next(json(429, fixtureJson('openai/error-429-rate-limit.json')));
  await t.rejects(gateway.client().chat.completions.create(ask('Provider says slow down')), { status: 429, message: /.+/ });
  await call(gateway.url, '/chat/completions', { body: JSON.stringify(ask('Unknown model', 'no-such-model-free-text')) });
  await call(gateway.url, '/nothing-here/free-text', { method: 'GET' });
}

t.test('after known traffic, every request is counted once with bounded labels, and the histograms agree', async (t) => {
  const gateway = await start();
  t.teardown(() => gateway.close());
  await send(t, gateway);
  const m = await scrape(gateway.url);

  const expected = [
    series({ route: CHAT, provider: 'openai', model: 'gpt-4o-mini', status: '200', cache: 'miss' }, 2),
    series({ route: CHAT, provider: 'openai', model: 'gpt-4o-mini', status: '200', cache: 'hit' }, 1),
    series({ route: CHAT, provider: 'none', model: 'none', status: '401', cache: 'none' }, 1),
    series({ route: CHAT, provider: 'openai', model: 'gpt-4o-mini', status: '429', cache: 'miss' }, 1),
    series({ route: CHAT, provider: 'none', model: 'other', status: '404', cache: 'miss' }, 1),
    series({ route: 'unmatched', provider: 'none', model: 'none', status: '404', cache: 'none' }, 1),
  ];
  t.same(table(m.series('modelgate_requests_total')), table(expected), 'requests by route, provider, model, status and cache result');
  t.same(table(m.series('modelgate_request_duration_seconds_count')), table(expected), 'one duration per request');
  const inf = m.series('modelgate_request_duration_seconds_bucket').filter((sample) => sample.labels.le === '+Inf');
  t.same(table(inf.map(({ labels: { le: _le, ...labels }, value }) => ({ labels, value }))), table(expected), 'every duration within the last bucket');

  t.same(table(m.series('modelgate_tokens_total')), table([
    series({ provider: 'openai', model: 'gpt-4o-mini', type: 'prompt', cache: 'miss' }, 48),
    series({ provider: 'openai', model: 'gpt-4o-mini', type: 'completion', cache: 'miss' }, 16),
    series({ provider: 'openai', model: 'gpt-4o-mini', type: 'prompt', cache: 'hit' }, 24),
    series({ provider: 'openai', model: 'gpt-4o-mini', type: 'completion', cache: 'hit' }, 8),
  ]), 'tokens from the provider, and tokens served from the cache');
  const oneAnswer = 24 * 1.5e-7 + 8 * 6e-7;
  t.ok(Math.abs(m.value('modelgate_cost_usd_total', { provider: 'openai', model: 'gpt-4o-mini' })! - 2 * oneAnswer) < 1e-12, 'two answers paid for');
  t.ok(Math.abs(m.value('modelgate_cache_saved_usd_total', { provider: 'openai', model: 'gpt-4o-mini' })! - oneAnswer) < 1e-12, 'one answer saved');

  t.equal(m.value('modelgate_cache_hits_total'), 1);
  t.equal(m.value('modelgate_cache_misses_total'), 4, 'the cache is consulted before routing, so the unknown model missed too');
  t.equal(m.value('modelgate_cache_bypasses_total'), 0);
  t.equal(m.value('modelgate_cache_entries', { backend: 'memory' }), 2);

  t.same(table(m.series('modelgate_refusals_total')), table([
    series({ reason: 'auth' }, 1),
    series({ reason: 'ip_filter' }, 0),
    series({ reason: 'rate_limit' }, 0),
    series({ reason: 'cost_guard' }, 0),
  ]), "the provider's 429 is not a refusal of the gateway's rate limiter");

  const provider = { provider: 'openai', model: 'gpt-4o-mini' };
  t.equal(m.value('modelgate_upstream_duration_seconds_count', provider), 3, 'the requests that reached the provider');
  t.equal(m.value('modelgate_gateway_overhead_seconds_count', { provider: 'openai' }), 3);
  t.equal(m.value('modelgate_time_to_first_token_seconds_count', provider), 1, 'the one stream');
  t.equal(m.value('modelgate_inter_token_latency_seconds_count', provider), 1);
  t.same(m.series('modelgate_retries_total'), []);
  t.equal(m.value('modelgate_inflight_requests'), 1, 'the scrape itself');
  t.ok(m.value('modelgate_process_cpu_user_seconds_total')! > 0, 'default process metrics, prefixed');
  t.ok(m.value('modelgate_nodejs_heap_size_used_bytes')! > 0);

  for (const secret of [GATEWAY_KEY, 'uc_wrong_key_1234', 'no-such-model-free-text', 'nothing-here', 'Count me']) t.notOk(m.text.includes(secret), `no label carries ${secret}`);

  const again = await scrape(gateway.url);
  t.equal(again.value('modelgate_requests_total', { route: 'GET /metrics', provider: 'none', model: 'none', status: '200', cache: 'none' }), 1, 'the previous scrape is counted too');
});

t.test('a stream the client leaves is counted once, as 499, with the cost it ran up', async (t) => {
  const gateway = await start({ MODELGATE_CACHE_ENABLED: 'false' });
  t.teardown(() => gateway.close());
  upstream.next(sse(fixture('openai/stream.sse'), { delayMs: 150 }));
  const controller = new AbortController();
  const stream = await gateway.client().chat.completions.create({ ...ask('Leave early'), stream: true }, { signal: controller.signal });
  try {
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) controller.abort();
  } catch {
    // aborted
  }
  let m = await scrape(gateway.url);
  for (let i = 0; i < 100 && !m.value('modelgate_requests_total', { route: CHAT, provider: 'openai', model: 'gpt-4o-mini', status: '499', cache: 'none' }); i++) {
    await sleep(20);
    m = await scrape(gateway.url);
  }
  t.equal(m.value('modelgate_requests_total', { route: CHAT, provider: 'openai', model: 'gpt-4o-mini', status: '499', cache: 'none' }), 1);
  t.notOk(m.value('modelgate_requests_total', { route: CHAT, provider: 'openai', model: 'gpt-4o-mini', status: '200', cache: 'none' }), 'not also as a 200');
  t.ok((m.value('modelgate_cost_usd_total', { provider: 'openai', model: 'gpt-4o-mini' }) ?? 0) > 0, 'the generated tokens were billed and counted');
});

t.test('models a provider serves outside the catalog are labelled other', async (t) => {
  const gateway = await start({ CUSTOM_BASE_URL: `${upstream.url}/v1`, CUSTOM_API_KEY: PROVIDER_KEYS.openai, CUSTOM_MODELS: 'llama-local', MODELGATE_ALLOW_UNPRICED_MODELS: 'true' });
  t.teardown(() => gateway.close());
  await gateway.client().chat.completions.create(ask('Any model', 'custom/anything-a-client-types'));
  await gateway.client().chat.completions.create(ask('Listed model', 'llama-local'));
  const m = await scrape(gateway.url);
  t.equal(m.value('modelgate_requests_total', { route: CHAT, provider: 'custom', model: 'other', status: '200', cache: 'miss' }), 1);
  t.equal(m.value('modelgate_requests_total', { route: CHAT, provider: 'custom', model: 'llama-local', status: '200', cache: 'miss' }), 1);
  t.notOk(m.text.includes('anything-a-client-types'));
});

t.test("refusals by the guards, retries and fallbacks are counted from each request's outcome", async (t) => {
  const gateway = await start();
  t.teardown(() => gateway.close());
  // The guards (IP filter, rate limiter, cost guard) land in another branch: their refusals are
  // GatewayErrors of these kinds, handed to the observer as the server does.
  const observer = gateway.app.plugins.find((plugin) => plugin.name === 'metrics')!;
  const finished = (fields: Partial<RequestContext>) =>
    observer.observe!({ route: CHAT, startedAt: performance.now(), headers: {}, outcome: newOutcome(), ...fields } as RequestContext);
  finished({ status: 403, error: new GatewayError('ip_forbidden') });
  finished({ status: 429, error: new GatewayError('rate_limit_exceeded') });
  finished({ status: 429, error: new GatewayError('cost_limit_exceeded') });
  finished({ status: 401, error: new GatewayError('api_key_expired') });
  const target = { provider: gateway.app.providers.get('openai')!, model: gateway.app.catalog.get('openai', 'gpt-4o-mini')! };
  finished({ status: 200, outcome: { ...newOutcome(), target, attempts: 4, retries: 2, fallbacks: 1, upstreamMs: 30 } });

  const m = await scrape(gateway.url);
  for (const reason of ['auth', 'ip_filter', 'rate_limit', 'cost_guard']) t.equal(m.value('modelgate_refusals_total', { reason }), 1, reason);
  t.equal(m.value('modelgate_requests_total', { route: CHAT, provider: 'none', model: 'none', status: '403', cache: 'none' }), 1);
  t.equal(m.value('modelgate_requests_total', { route: CHAT, provider: 'none', model: 'none', status: '429', cache: 'none' }), 2);
  t.equal(m.value('modelgate_retries_total', { provider: 'openai', model: 'gpt-4o-mini' }), 2);
  t.equal(m.value('modelgate_fallbacks_total', { provider: 'openai', model: 'gpt-4o-mini' }), 1);
});

t.test('the gateway overhead leaves out the waits between attempts: retry backoffs and the failover delay', async (t) => {
  const WAIT_MS = 400;
  const gateway = await start({
    MODELGATE_CACHE_ENABLED: 'false',
    MODELGATE_RETRIES: '1',
    MODELGATE_RETRY_DELAY: String(WAIT_MS),
    MODELGATE_EXPONENTIAL_BACKOFF: 'false',
    MODELGATE_FAILOVER_ENABLED: 'true',
    MODELGATE_FAILOVER_DELAY: String(WAIT_MS),
    CUSTOM_BASE_URL: `${upstream.url}/v1`,
    CUSTOM_API_KEY: PROVIDER_KEYS.openai,
    MODELGATE_ALLOW_UNPRICED_MODELS: 'true',
    MODELGATE_MAX_COST_PER_REQUEST: '1',
  });
  t.teardown(() => gateway.close());
  upstream.next(json(500, fixtureJson('openai/error-500.json')), json(500, fixtureJson('openai/error-500.json')));
  // openai fails, waits out one backoff, fails again; then the failover delay; then custom answers.
  const { response } = await gateway.client().chat.completions.create({ ...ask('Wait for it'), modelgate: { failover: { fallback_models: ['custom/llama-local'] } } } as never).withResponse();
  t.equal(response.headers.get('x-modelgate-attempts'), '3');
  const m = await scrape(gateway.url);
  const total = m.series('modelgate_request_duration_seconds_sum').find((sample) => sample.labels.route === CHAT)!.value;
  const overhead = m.value('modelgate_gateway_overhead_seconds_sum', { provider: 'custom' })!;
  t.ok(total >= (2 * WAIT_MS) / 1000, `the request took ${total} s, both waits included`);
  t.ok(overhead < WAIT_MS / 1000, `the overhead, ${overhead} s, holds neither wait`);
});

t.test('the circuit gauge follows the health registry', async (t) => {
  const gateway = await start();
  t.teardown(() => gateway.close());
  const states = async () => Object.fromEntries((await scrape(gateway.url)).series('modelgate_circuit_state').filter((s) => s.labels.provider === 'openai').map((s) => [s.labels.state, s.value]));
  t.same(await states(), { closed: 1, open: 0, half_open: 0, disabled: 0 });
  gateway.app.deps.health.setCircuit('openai', 'open');
  t.same(await states(), { closed: 0, open: 1, half_open: 0, disabled: 0 });
  gateway.app.deps.health.setCircuit('openai', 'half_open');
  gateway.app.deps.health.setCircuit('openai', 'closed');
  t.same(await states(), { closed: 1, open: 0, half_open: 0, disabled: 0 });
  const m = await scrape(gateway.url);
  t.equal(m.value('modelgate_circuit_transitions_total', { provider: 'openai', state: 'open' }), 1);
  t.equal(m.value('modelgate_circuit_transitions_total', { provider: 'openai', state: 'half_open' }), 1);
  t.equal(m.value('modelgate_circuit_transitions_total', { provider: 'openai', state: 'closed' }), 1);
});

t.test('budget events set the used ratio per period; alerts are counted by action', async (t) => {
  const gateway = await start();
  t.teardown(() => gateway.close());
  const events = gateway.app.deps.events;
  events.emit('budget', { period: 'day', spentUsd: 25, limitUsd: 100, usedRatio: 0.25 });
  events.emit('budget', { period: 'day', spentUsd: 80, limitUsd: 100, usedRatio: 0.8 });
  events.emit('budget', { period: 'month', spentUsd: 300, limitUsd: 2000, usedRatio: 0.15 });
  events.emit('alert', { kind: 'budget.threshold', action: 'pause', at: new Date().toISOString() });
  events.emit('alert', { kind: 'budget.threshold', action: 'carrier pigeon', at: new Date().toISOString() });
  const m = await scrape(gateway.url);
  t.equal(m.value('modelgate_budget_used_ratio', { period: 'day' }), 0.8, 'the latest event of the period wins');
  t.equal(m.value('modelgate_budget_used_ratio', { period: 'month' }), 0.15);
  t.equal(m.value('modelgate_budget_spent_usd', { period: 'day' }), 80);
  t.equal(m.value('modelgate_alerts_total', { action: 'pause' }), 1);
  t.equal(m.value('modelgate_alerts_total', { action: 'other' }), 1);
});

t.test('MODELGATE_METRICS_TOKEN protects /metrics with a bearer token', async (t) => {
  const gateway = await start({ MODELGATE_METRICS_TOKEN: 'scrape-secret-123' });
  t.teardown(() => gateway.close());
  for (const key of [null, GATEWAY_KEY, 'scrape-secret-12']) {
    const refused = await call(gateway.url.replace(/\/v1$/, ''), '/metrics', { key });
    t.equal(refused.status, 401, `refused with ${key ?? 'no key'}`);
    t.match(refused.headers.get('www-authenticate'), /^Bearer realm="modelgate-metrics"/);
  }
  const m = await scrape(gateway.url, 'scrape-secret-123');
  t.equal(m.value('modelgate_refusals_total', { reason: 'auth' }), 3, 'the refused scrapes are counted');
});

t.test('MODELGATE_METRICS_ENABLED=false: no /metrics, no observer', async (t) => {
  const gateway = await start({ MODELGATE_METRICS_ENABLED: 'false' });
  t.teardown(() => gateway.close());
  const response = await call(gateway.url.replace(/\/v1$/, ''), '/metrics', { key: null });
  t.equal(response.status, 404);
  t.notOk(gateway.app.plugins.find((plugin) => plugin.name === 'metrics')?.observe);
  const { response: chat } = await gateway.client().chat.completions.create(ask('Still served')).withResponse();
  t.equal(chat.status, 200);
  t.ok(chat.headers.get('x-modelgate-cache'), 'the cache does not depend on the metrics');
});

// Listening servers keep the event loop alive: end the root test explicitly so t.after runs.
t.end();
