// GET /v1/health: load balancers probe it without a key, so it never refuses and says only whether
// the gateway serves; its details (version, uptime, providers) go only to a client the keyed routes
// would admit. It never calls a provider.
import t from 'tap';
import { startGateway, call, GATEWAY_KEY, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import type { FakeProvider } from '../helpers/fake-provider.js';
import type { KeyStore } from '../../core/key-store.js';
import { VERSION } from '../../core/app.js';

/** A tenant's key, an expired key, and a key whose lookup fails (a database that is away). */
const keys: KeyStore = {
  verify(secret) {
    if (secret === 'uc_tenant_key') return { keyId: 'tenant', tenant: 'acme', admin: false };
    if (secret === 'uc_expired_key') return { keyId: 'old', tenant: 'acme', admin: false, expiresAt: Date.now() - 1000 };
    if (secret === 'uc_store_fails') throw new Error('key store unreachable');
    return undefined;
  },
};

let upstream: FakeProvider;
let gateway: TestGateway;

t.before(async () => {
  upstream = await startFakeOpenAI();
  gateway = await startGateway({ OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1` }, { keyStores: [keys] });
});
t.after(async () => {
  await gateway.close();
  await upstream.close();
});

t.test('without a valid key, health says only its status, with 200 and never 401', async (t) => {
  const cases: Array<[string, Parameters<typeof call>[2]]> = [
    ['no key', { key: null }],
    ['an unknown key', { key: 'uc_wrong' }],
    ['a malformed header', { key: null, headers: { authorization: 'Basic abc' } }],
    ['an expired key', { key: 'uc_expired_key' }],
    ['a key whose lookup fails', { key: 'uc_store_fails' }],
  ];
  for (const [name, init] of cases) {
    const health = await call(gateway.url, '/health', init);
    t.equal(health.status, 200, `${name}: 200`);
    t.same(health.json, { status: 'ok' }, `${name}: status only`);
    t.equal(health.headers.get('www-authenticate'), null, `${name}: no challenge`);
    t.equal(health.headers.get('cache-control'), 'no-store', `${name}: not to be cached`);
    t.ok(health.headers.get('x-request-id'), `${name}: x-request-id`);
  }
});

t.test('with a valid key, health adds the version, the uptime and the configured providers', async (t) => {
  for (const key of [GATEWAY_KEY, 'uc_tenant_key']) {
    const health = await call(gateway.url, '/health', { key });
    t.equal(health.status, 200);
    t.same(Object.keys(health.json).sort(), ['providers', 'status', 'uptime_seconds', 'version']);
    t.match(health.json, { status: 'ok', version: VERSION, providers: { configured: ['openai'] } });
    t.ok(Number.isInteger(health.json.uptime_seconds) && health.json.uptime_seconds >= 0, 'uptime in whole seconds');
    t.equal(health.headers.get('cache-control'), 'no-store', 'an answer for this key only');
  }
});

t.test('a client the IP filter refuses gets the status only, even with a valid key', async (t) => {
  const blocked = await startGateway({ MODELGATE_BLOCKED_IPS: '127.0.0.1' });
  t.teardown(() => blocked.close());
  t.equal((await call(blocked.url, '/models')).status, 403, 'the keyed routes refuse this client');
  const health = await call(blocked.url, '/health');
  t.equal(health.status, 200);
  t.same(health.json, { status: 'ok' });
});

t.test('HEAD /v1/health answers as GET does, without a body (load balancers probe with HEAD)', async (t) => {
  const head = await fetch(`${gateway.url}/health`, { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(await head.text(), '', 'no body');
  t.equal(head.headers.get('content-type'), 'application/json');
  const wrong = await fetch(`${gateway.url}/health`, { method: 'DELETE' });
  t.equal(wrong.status, 405);
  t.equal(wrong.headers.get('allow'), 'GET, HEAD', 'HEAD is allowed wherever GET is');
  const chat = await fetch(`${gateway.url}/chat/completions`, { method: 'HEAD' });
  t.equal(chat.status, 405, 'not where there is no GET');
  t.equal(chat.headers.get('allow'), 'POST');
});

t.test('health never calls a provider', async (t) => {
  t.equal(upstream.requests.length, 0);
});

t.end();
