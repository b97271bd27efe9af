// The cost guard per key, end to end: a key's own daily budget refuses (429 insufficient_quota,
// saying it is the key's) what it cannot hold while other keys go on; concurrent requests never
// overshoot it; a key's own max_cost_per_request replaces the gateway's; and across two replicas on
// Redis the key's budget and the gateway's both hold, each refusal naming whose budget refused.
import t, { type Test } from 'tap';
import OpenAI from 'openai';
import { startGateway, call, type TestGateway, PROTOCOL_ONLY, GATEWAY_KEY } from '../helpers/gateway.js';
import { startFakeOpenAI, openAIResponder, PROVIDER_KEYS } from '../helpers/fakes.js';
import { json, fixtureJson, sleep, type FakeProvider } from '../helpers/fake-provider.js';
import { testPrefix, redisEnv, flushPrefix } from '../helpers/redis.js';
import { chatRequest, estimateOf, PRICE, testCatalog } from '../helpers/money.js';
import { postgresEnv } from '../helpers/database.js';
import { keyStore, type TestKey } from '../helpers/keys.js';
import type { ChatRequest } from '../../core/chat-types.js';

let upstream: FakeProvider;
const catalog = testCatalog();
const prefixes: string[] = [];
t.before(async () => {
  upstream = await startFakeOpenAI();
});
t.after(async () => {
  await upstream.close();
  for (const prefix of prefixes) await flushPrefix(prefix);
});
t.beforeEach(() => {
  upstream.reset();
  upstream.fallback = openAIResponder();
});

const request = chatRequest(64);
const estimate = estimateOf(request);
const BUDGETED = 'uc_budgeted_key_0123456789abcdef';
const OTHER = 'uc_other_key_0123456789abcdefgh';

function env(extra: Record<string, string> = {}): Record<string, string> {
  return { ...PROTOCOL_ONLY, OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_MODEL_CATALOG: catalog, ...extra };
}

async function gatewayWith(t: Test, keys: Record<string, TestKey>, extra: Record<string, string> = {}): Promise<TestGateway> {
  const gateway = await startGateway(env(extra), { keyStores: [keyStore(keys)] });
  t.teardown(() => gateway.close());
  return gateway;
}

const send = (gateway: TestGateway, key: string, body: ChatRequest = request) => call(gateway.url, '/chat/completions', { key, body: JSON.stringify(body) });

/** Holds every upstream answer until `count` requests arrived (or 4 s passed), answering 88 tokens each. */
function holdUpstream(): { until(count: number): Promise<void>; release(): void } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  upstream.fallback = async (recorded, res) => {
    await released;
    return json(200, { ...fixtureJson('openai/chat.json'), usage: { prompt_tokens: 24, completion_tokens: 64, total_tokens: 88 } })(recorded, res);
  };
  return {
    async until(count) {
      for (let i = 0; i < 200 && upstream.requests.length < count; i++) await sleep(20);
    },
    release,
  };
}

t.test("20 concurrent requests of a key against its own daily budget that admits 3: three pass, the rest are refused in the key's name", async (t) => {
  const gateway = await gatewayWith(t, { [BUDGETED]: { limits: { daily_cost_limit: 3.5 * estimate } } });
  const held = holdUpstream();
  const responses = Promise.all(Array.from({ length: 20 }, () => send(gateway, BUDGETED)));
  await held.until(3);
  held.release();
  const answered = await responses;
  t.equal(answered.filter((r) => r.status === 200).length, 3, 'three admitted');
  t.equal(upstream.requests.length, 3, 'the upstream saw three');
  const refused = answered.find((r) => r.status === 429)!;
  t.equal(refused.json.error.code, 'insufficient_quota');
  t.equal(refused.json.error.param, 'daily_cost_limit');
  t.match(refused.json.error.message, /^This API key's daily cost limit of \$[\d.]+ reached/);
  t.equal(refused.headers.get('x-should-retry'), 'false');

  // Settled at 88 tokens each: 3 × 88 × PRICE of the key's 3.5 estimates; what is left holds no more requests.
  const client = new OpenAI({ apiKey: BUDGETED, baseURL: gateway.url, maxRetries: 0 });
  const error = await client.chat.completions.create({ model: request.model, messages: [{ role: 'user', content: 'What is the capital of France?' }], max_tokens: 64 }).catch((caught: unknown) => caught);
  t.ok(error instanceof OpenAI.RateLimitError, 'the SDK raises RateLimitError');
  t.equal((await send(gateway, GATEWAY_KEY)).status, 200, "another key is not held to this key's budget");
});

t.test("a key's own max_cost_per_request replaces the gateway's, lower or higher", async (t) => {
  const gateway = await gatewayWith(
    t,
    { [BUDGETED]: { limits: { max_cost_per_request: estimate / 2 } }, [OTHER]: { limits: { max_cost_per_request: estimate * 2 } } },
    { MODELGATE_MAX_COST_PER_REQUEST: String(estimate * 0.9) },
  );
  const low = await send(gateway, BUDGETED);
  t.equal(low.status, 429);
  t.equal(low.json.error.code, 'cost_per_request_exceeded');
  t.match(low.json.error.message, /over the API key's per-request cost limit/);
  t.equal((await send(gateway, GATEWAY_KEY)).status, 429, "the gateway's cap refuses the bootstrap key");
  t.equal((await send(gateway, OTHER)).status, 200, 'the key with a higher cap of its own is served');
});

t.test("two replicas on Redis: the key's budget and the gateway's both hold, each refusal naming whose budget refused", async (t) => {
  const prefix = testPrefix();
  prefixes.push(prefix);
  const shared = env({ ...redisEnv(prefix), ...postgresEnv(), REDIS_COMMAND_TIMEOUT: '5000', MODELGATE_STORE: 'redis', MODELGATE_LEDGER_FLUSH_INTERVAL: '100', MODELGATE_DAILY_COST_LIMIT: String(5.5 * estimate) });
  const keys = keyStore({ [BUDGETED]: { limits: { daily_cost_limit: 3.5 * estimate } } });
  const a = await startGateway(shared, { keyStores: [keys] });
  const b = await startGateway(shared, { keyStores: [keys] });
  t.teardown(async () => {
    await a.close();
    await b.close();
  });

  let held = holdUpstream();
  let responses = Promise.all(Array.from({ length: 20 }, (_, i) => send(i % 2 === 0 ? a : b, BUDGETED)));
  await held.until(3);
  held.release();
  let answered = await responses;
  t.equal(answered.filter((r) => r.status === 200).length, 3, "three of the key's across both replicas");
  t.ok(answered.filter((r) => r.status === 429).every((r) => /^This API key's daily/.test(r.json.error.message)), "every refusal is the key's budget");

  // The gateway's budget has 5.5 estimates, 3 × 88 tokens of them spent: two more requests of any key fit.
  upstream.reset();
  held = holdUpstream();
  responses = Promise.all(Array.from({ length: 10 }, (_, i) => send(i % 2 === 0 ? a : b, GATEWAY_KEY)));
  await held.until(2);
  held.release();
  answered = await responses;
  t.equal(answered.filter((r) => r.status === 200).length, 2, "two more, of another key, fit the gateway's budget");
  t.ok(answered.filter((r) => r.status === 429).every((r) => /^Daily cost limit of/.test(r.json.error.message)), "every refusal is the gateway's budget");
  const usage = (await call(a.url, '/usage')).json;
  t.ok(usage.budgets.day.spent_usd <= 5.5 * estimate + estimate, 'the gateway budget never overshot by more than one estimate');
  t.ok(Math.abs(usage.budgets.day.spent_usd - 5 * 88 * PRICE) < 1e-9, 'five requests billed in all');
  t.equal(usage.budgets.day.reserved_usd, 0, 'every reservation was released');
});

t.end();
