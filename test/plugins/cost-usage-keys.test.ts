// GET /v1/usage per key: a non-admin key sees only its own counts — not those of another key, even
// of its own tenant — and may not ask for another key's (403 admin_required); an admin key sees
// every key's, or one key's with key_id.
import t from 'tap';
import { startGateway, call, type TestGateway, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import type { FakeProvider } from '../helpers/fake-provider.js';
import { chatRequest, testCatalog } from '../helpers/money.js';
import { checkError } from '../helpers/schema.js';
import { keyStore } from '../helpers/keys.js';

const ALPHA = 'uc_alpha_key_0123456789abcdefgh';
const BETA = 'uc_beta_key_0123456789abcdefghi';
const keys = keyStore({ [ALPHA]: { tenant: 'acme' }, [BETA]: { tenant: 'acme' } });

let upstream: FakeProvider;
let gateway: TestGateway;
t.before(async () => {
  upstream = await startFakeOpenAI();
  gateway = await startGateway({ ...PROTOCOL_ONLY, OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_MODEL_CATALOG: testCatalog() }, { keyStores: [keys] });
  const send = (key?: string) => call(gateway.url, '/chat/completions', { key, body: JSON.stringify(chatRequest(16)) });
  for (const key of [ALPHA, BETA, BETA, undefined, undefined, undefined]) t.equal((await send(key)).status, 200);
});
t.after(async () => {
  await gateway.close();
  await upstream.close();
});

const today = new Date().toISOString().slice(0, 10);
const usage = (key?: string, query = '') => call(gateway.url, `/usage?from=${today}${query}`, { key });
const keyIds = (body: { range: { by_key: Array<{ key_id: string }> } }) => body.range.by_key.map((row) => row.key_id).sort();

t.test('a key sees its own usage only, not that of another key of its tenant', async (t) => {
  const alpha = await usage(ALPHA);
  t.equal(alpha.status, 200);
  t.equal(alpha.json.range.requests, 1);
  t.same(keyIds(alpha.json), ['alpha_key_0123456789abcdefgh']);
  t.equal(alpha.json.budgets.day.requests, 1, "the periods' counts are its own too");
  const beta = await usage(BETA);
  t.equal(beta.json.range.requests, 2);
  t.same(keyIds(beta.json), ['beta_key_0123456789abcdefghi']);
  t.equal((await usage(ALPHA, '&key_id=alpha_key_0123456789abcdefgh')).json.range.requests, 1, 'it may name itself');
});

t.test("a key asking for another key's usage is refused with 403 admin_required", async (t) => {
  const refused = await usage(ALPHA, '&key_id=beta_key_0123456789abcdefghi');
  t.equal(refused.status, 403);
  t.equal(checkError(refused.json), null);
  t.equal(refused.json.error.code, 'admin_required');
  t.equal(refused.json.error.param, 'key_id');
  t.equal((await usage(ALPHA, '&key_id=')).status, 400, 'an empty key_id is invalid');
});

t.test("an admin sees every key's usage, or one key's with key_id", async (t) => {
  const all = await usage();
  t.equal(all.json.range.requests, 6);
  t.equal(all.json.range.by_key.length, 3);
  const beta = await usage(undefined, '&key_id=beta_key_0123456789abcdefghi');
  t.equal(beta.json.range.requests, 2);
  t.same(keyIds(beta.json), ['beta_key_0123456789abcdefghi']);
});

t.end();
