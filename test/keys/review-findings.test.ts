// What an independent review of the keys found, each checked through the real gateway: a replaced
// admin secret in its grace no longer administers; regenerating a key that has already expired
// does not bring its old secret back; a key restricted to some models is never served a cached
// answer of another. (The lookups kept for re-checking known secrets under a flood of random ones
// are not tested here: the flood never filled the lookup queue on this machine's SQLite.)
import t from 'tap';
import { startGateway, call, PROTOCOL_ONLY, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import type { FakeProvider } from '../helpers/fake-provider.js';
import { testCatalog } from '../helpers/money.js';

let upstream: FakeProvider;
let gateway: TestGateway;
t.before(async () => {
  upstream = await startFakeOpenAI();
  gateway = await startGateway({
    ...PROTOCOL_ONLY,
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_MODEL_CATALOG: testCatalog(),
    MODELGATE_CACHE_ENABLED: 'true',
    MODELGATE_API_KEY_ROTATION_GRACE: '3600',
    MODELGATE_API_KEY_ROTATION_ENABLED: 'true',
  });
});
t.teardown(async () => {
  await gateway?.close();
  await upstream?.close();
});

const admin = (path: string, init: Parameters<typeof call>[2] = {}) => call(gateway.url, path, init);
const create = async (body: Record<string, unknown>) => (await admin('/admin/keys', { body: JSON.stringify(body) })).json as { id: string; key: string };
const chat = (key: string, model: string) => call(gateway.url, '/chat/completions', { key, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'What is the capital of France?' }] }) });

t.test('an admin secret replaced by regenerate still serves requests in its grace, but no longer administers', async (t) => {
  const operator = await create({ name: 'operator', admin: true });
  const regenerated = await admin(`/admin/keys/${operator.id}/regenerate`, { method: 'POST' });
  t.equal(regenerated.status, 200);
  t.equal((await call(gateway.url, '/models', { key: operator.key })).status, 200, 'the old secret works in its grace');
  const made = await call(gateway.url, '/admin/keys', { key: operator.key, body: JSON.stringify({ name: 'by a leaked secret' }) });
  t.equal(made.status, 403, 'but cannot make keys');
  t.equal(made.json.error.code, 'admin_required');
  t.equal((await call(gateway.url, '/admin/keys', { key: regenerated.json.key })).status, 200, 'the new secret administers');
});

t.test('regenerating a key that has already expired (rotation on: the regenerate sets a new expiry) does not revive its old secret', async (t) => {
  const soon = await create({ name: 'expiring', expires_at: new Date(Date.now() + 1500).toISOString() });
  await new Promise((resolve) => setTimeout(resolve, 2000));
  t.equal((await call(gateway.url, '/models', { key: soon.key })).json.error.message, 'API key expired');
  const regenerated = await admin(`/admin/keys/${soon.id}/regenerate`, { method: 'POST' });
  t.equal(regenerated.status, 200);
  t.equal((await call(gateway.url, '/models', { key: soon.key })).json.error?.message, 'API key expired', 'the old secret stays expired, grace or not');
});

t.test("a key restricted to some models is never served another model's cached answer", async (t) => {
  const open = await create({ name: 'open', owner: 'acme' });
  const narrow = await create({ name: 'narrow', owner: 'acme', allowed_models: ['openai/mystery-1'] });
  const first = await chat(open.key, 'gpt-4o-mini');
  t.equal(first.status, 200);
  t.equal((await chat(open.key, 'gpt-4o-mini')).headers.get('x-modelgate-cache'), 'HIT', 'the answer is cached for the tenant');
  const refused = await chat(narrow.key, 'gpt-4o-mini');
  t.equal(refused.status, 403, 'the restricted key of the same tenant is refused, not served the cached answer');
  t.equal(refused.json.error.code, 'model_not_allowed');
});
