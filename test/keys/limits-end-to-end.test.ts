// Issue 14 end to end: a key created through the admin API carries its own limits, budget and
// allowed models to the request path, the openai SDK sees each refusal as its own error class, and
// a PATCH of a limit reaches the next request — the key store (plugins/keys) and the enforcement
// (rate-limit, cost-guard, router) meeting through ctx.principal.
import t from 'tap';
import OpenAI from 'openai';
import { call, startGateway, PROTOCOL_ONLY, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import type { FakeProvider } from '../helpers/fake-provider.js';
import { testCatalog } from '../helpers/money.js';

let upstream: FakeProvider;
let gateway: TestGateway;
t.before(async () => {
  upstream = await startFakeOpenAI();
  gateway = await startGateway({ ...PROTOCOL_ONLY, OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_MODEL_CATALOG: testCatalog() });
});
t.teardown(async () => {
  await gateway?.close();
  await upstream?.close();
});

const client = (apiKey: string) => new OpenAI({ apiKey, baseURL: gateway.url, maxRetries: 0 });
const ask = (apiKey: string, model = 'gpt-4o-mini') => client(apiKey).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });

async function createKey(body: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const created = await call(gateway.url, '/admin/keys', { body: JSON.stringify(body) });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${created.text}`);
  return created.json;
}

t.test("a key's own requests_per_minute refuses its third request; another key is not affected", async (t) => {
  const limited = await createKey({ name: 'two a minute', limits: { requests_per_minute: 2 } });
  const other = await createKey({ name: 'unlimited' });
  await ask(limited.key);
  await ask(limited.key);
  const error = await ask(limited.key).catch((e: unknown) => e);
  t.ok(error instanceof OpenAI.RateLimitError, 'the SDK raises RateLimitError');
  t.equal((error as InstanceType<typeof OpenAI.RateLimitError>).param, 'requests_per_minute', 'naming the limit');
  t.ok((await ask(other.key)).choices[0], "another key's requests pass");
});

t.test('a PATCH of a key\'s limit reaches the next request', async (t) => {
  const key = await createKey({ name: 'patched', limits: { requests_per_minute: 1 } });
  await ask(key.key);
  t.ok((await ask(key.key).catch((e: unknown) => e)) instanceof OpenAI.RateLimitError, 'refused at 1 a minute');
  const patched = await call(gateway.url, `/admin/keys/${key.id}`, { method: 'PATCH', body: JSON.stringify({ limits: { requests_per_minute: 100 } }) });
  t.equal(patched.status, 200);
  t.ok((await ask(key.key)).choices[0], 'served at 100 a minute');
});

t.test("a key's max_cost_per_request and allowed models are enforced", async (t) => {
  const cheap = await createKey({ name: 'tiny cap', limits: { max_cost_per_request: 1e-9 } });
  const capped = await ask(cheap.key).catch((e: unknown) => e);
  t.ok(capped instanceof OpenAI.RateLimitError, 'over its own per-request cap: 429');
  t.equal((capped as InstanceType<typeof OpenAI.RateLimitError>).code, 'cost_per_request_exceeded');
  const narrow = await createKey({ name: 'one model', allowed_models: ['openai/mystery-1'] });
  const refused = await ask(narrow.key, 'gpt-4o-mini').catch((e: unknown) => e);
  t.ok(refused instanceof OpenAI.PermissionDeniedError, 'a model outside its set: 403');
  t.equal((refused as InstanceType<typeof OpenAI.PermissionDeniedError>).code, 'model_not_allowed');
});

t.test("a revoked key is refused on its next request, and its daily budget is its own", async (t) => {
  // Each request reserves ~$12e-6 and the fixture answer is billed $32e-6 at the test price: the
  // first fits the key's $40e-6, the second no longer does.
  const key = await createKey({ name: 'budgeted', limits: { daily_cost_limit: 0.00004 } });
  await ask(key.key);
  const over = await ask(key.key).catch((e: unknown) => e);
  t.ok(over instanceof OpenAI.RateLimitError, 'its own daily budget is spent: 429');
  t.match((over as Error).message, /API key's daily cost limit/);
  const usage = await call(gateway.url, `/usage?key_id=${key.id}`);
  t.equal(usage.status, 200, 'an admin reads its usage by key id');
  const revoked = await call(gateway.url, `/admin/keys/${key.id}`, { method: 'DELETE' });
  t.equal(revoked.status, 200);
  const refused = await ask(key.key).catch((e: unknown) => e);
  t.ok(refused instanceof OpenAI.AuthenticationError, 'revoked: 401');
  t.notMatch(JSON.stringify(refused), key.key, 'the secret is not in the error');
});
