// The provider endpoints against every fake: the list (never a secret), the connection test (each
// provider's model-list call with its own auth), and the status from live traffic.
import t from 'tap';
import { startGateway, call, PROTOCOL_ONLY, type TestGateway } from '../helpers/gateway.js';
import { startFakeAnthropic, startFakeCohere, startFakeGemini, startFakeMistral, startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { fixtureJson, json, type FakeProvider } from '../helpers/fake-provider.js';

const fakes: Record<string, FakeProvider> = {};
let gateway: TestGateway;

t.before(async () => {
  [fakes.openai, fakes.anthropic, fakes.google, fakes.cohere, fakes.mistral] = await Promise.all([
    startFakeOpenAI(),
    startFakeAnthropic(),
    startFakeGemini(),
    startFakeCohere(),
    startFakeMistral(),
  ]);
  gateway = await startGateway({
    ...PROTOCOL_ONLY,
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${fakes.openai!.url}/v1`,
    ANTHROPIC_API_KEY: PROVIDER_KEYS.anthropic,
    ANTHROPIC_BASE_URL: fakes.anthropic!.url,
    GOOGLE_API_KEY: PROVIDER_KEYS.google,
    GOOGLE_BASE_URL: fakes.google!.url,
    COHERE_API_KEY: PROVIDER_KEYS.cohere,
    COHERE_BASE_URL: fakes.cohere!.url,
    MISTRAL_API_KEY: PROVIDER_KEYS.mistral,
    MISTRAL_BASE_URL: fakes.mistral!.url,
  });
});
t.after(async () => {
  await gateway.close();
  await Promise.all(Object.values(fakes).map((fake) => fake.close()));
});

t.test('GET /v1/providers lists every provider, configured or not, with its models and no secret', async (t) => {
  const response = await call(gateway.url, '/providers');
  t.equal(response.status, 200);
  const byName = Object.fromEntries(response.json.data.map((p: { name: string }) => [p.name, p]));
  t.same(Object.keys(byName), ['openai', 'anthropic', 'google', 'cohere', 'mistral', 'custom']);
  t.equal(byName.openai.configured, true);
  t.equal(byName.custom.configured, false);
  t.ok(byName.anthropic.models.includes('claude-sonnet-4-5'));
  for (const key of Object.values(PROVIDER_KEYS)) t.notOk(response.text.includes(key), 'no provider key in the answer');
});

t.test('GET /v1/providers/{provider}/test makes each provider\'s model-list call with its own auth', async (t) => {
  const expected: Record<string, { path: RegExp; auth: (h: Record<string, unknown>) => boolean }> = {
    openai: { path: /^\/v1\/models$/, auth: (h) => h.authorization === `Bearer ${PROVIDER_KEYS.openai}` },
    anthropic: { path: /^\/v1\/models/, auth: (h) => h['x-api-key'] === PROVIDER_KEYS.anthropic },
    google: { path: /^\/v1beta\/models\?/, auth: (h) => h['x-goog-api-key'] === PROVIDER_KEYS.google },
    cohere: { path: /^\/v1\/models/, auth: (h) => h.authorization === `Bearer ${PROVIDER_KEYS.cohere}` },
    mistral: { path: /^\/v1\/models$/, auth: (h) => h.authorization === `Bearer ${PROVIDER_KEYS.mistral}` },
  };
  for (const [name, { path, auth }] of Object.entries(expected)) {
    fakes[name]!.reset();
    const result = await call(gateway.url, `/providers/${name}/test`);
    t.equal(result.status, 200, name);
    t.match(result.json, { provider: name, configured: true, ok: true, status: 200 }, name);
    t.type(result.json.latency_ms, 'number');
    const seen = fakes[name]!.last!;
    t.match(seen.url, path, `${name}: path`);
    t.ok(auth(seen.headers), `${name}: auth header`);
    t.equal(seen.method, 'GET');
  }
});

t.test('a failing connection test says why; unknown and unconfigured providers are told apart', async (t) => {
  fakes.openai!.next(json(401, fixtureJson('openai/error-401.json')));
  const refused = await call(gateway.url, '/providers/openai/test');
  t.match(refused.json, { ok: false, status: 401, error: /rejected the gateway's credentials/ });

  const unconfigured = await call(gateway.url, '/providers/custom/test');
  t.match(unconfigured.json, { provider: 'custom', configured: false, ok: false });

  const unknown = await call(gateway.url, '/providers/acme/test');
  t.equal(unknown.status, 404);
  t.match(unknown.json.error, { message: /Provider not found/, code: 'provider_not_found', param: 'provider' });
});

t.test('an unreachable provider fails its test without hanging', async (t) => {
  const down = await startGateway({ OPENAI_API_KEY: 'sk-x', OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' });
  t.teardown(() => down.close());
  const result = await call(down.url, '/providers/openai/test');
  t.match(result.json, { ok: false, status: 0, error: /could not connect/ });
});

t.test('GET /v1/providers/status reports live traffic: success rate, latency, last error', async (t) => {
  const client = gateway.client();
  await client.chat.completions.create({ model: 'mistral/mistral-small-latest', messages: [{ role: 'user', content: 'hi' }] });
  fakes.mistral!.next(json(500, { message: 'boom' }));
  await t.rejects(client.chat.completions.create({ model: 'mistral/mistral-small-latest', messages: [{ role: 'user', content: 'hi' }] }));
  const status = await call(gateway.url, '/providers/status');
  const mistral = status.json.data.find((p: { provider: string }) => p.provider === 'mistral');
  t.match(mistral, { state: 'degraded', circuit: 'disabled', success_rate: 0.5, requests: 2 });
  t.type(mistral.latency_ms.p50, 'number');
  t.match(mistral.last_error, { status: 500, reason: 'http_status', message: /boom/ });
  t.ok(Number.isFinite(Date.parse(mistral.last_error.at)), 'last_error.at is a date');
  const custom = status.json.data.find((p: { provider: string }) => p.provider === 'custom');
  t.equal(custom.state, 'not_configured');
  const google = status.json.data.find((p: { provider: string }) => p.provider === 'google');
  t.match(google, { state: 'unknown', success_rate: null, latency_ms: null, last_error: null });
});

t.end();
