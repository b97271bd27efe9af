// The response cache with many keys, on Redis shared by two replicas: the keys of one tenant share
// its entries (a second key of the tenant is served the first one's answer), and a key of another
// tenant is never served them — on either replica — but gets and then shares its own.
import t from 'tap';
import { startGateway, call, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { fixtureJson, json, sleep, type FakeProvider, type Responder } from '../helpers/fake-provider.js';
import { flushPrefix, redisEnv, testPrefix } from '../helpers/redis.js';
import { keyStore } from '../helpers/keys.js';

const ACME_ONE = 'uc_acme_one_0123456789abcdefgh';
const ACME_TWO = 'uc_acme_two_0123456789abcdefgh';
const GLOBEX = 'uc_globex_0123456789abcdefghij';
const keys = keyStore({ [ACME_ONE]: { tenant: 'acme' }, [ACME_TWO]: { tenant: 'acme' }, [GLOBEX]: { tenant: 'globex' } });

const prefix = testPrefix();
let upstream: FakeProvider;
let a: TestGateway;
let b: TestGateway;
t.before(async () => {
  upstream = await startFakeOpenAI();
  const env = { OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_CACHE_TYPE: 'redis', MODELGATE_RETRIES: '0', REDIS_COMMAND_TIMEOUT: '5000', ...redisEnv(prefix) };
  a = await startGateway(env, { keyStores: [keys] });
  b = await startGateway(env, { keyStores: [keys] });
});
t.after(async () => {
  await a.close();
  await b.close();
  await upstream.close();
  await flushPrefix(prefix);
});

function answering(content: string): Responder {
  const body = fixtureJson('openai/chat.json');
  body.choices[0].message.content = content;
  return json(200, body);
}

async function ask(gateway: TestGateway, key: string) {
  const response = await call(gateway.url, '/chat/completions', { key, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Whose answer is this?' }] }) });
  return { cache: response.headers.get('x-modelgate-cache'), content: response.json.choices[0].message.content as string };
}

t.test("a tenant's keys share its cache; another tenant's key is never served its entries, on either replica", async (t) => {
  upstream.next(answering('for acme'), answering('for globex'));
  t.same(await ask(a, ACME_ONE), { cache: 'MISS', content: 'for acme' });
  await sleep(300); // the entry is stored after the answer is sent
  t.same(await ask(b, ACME_TWO), { cache: 'HIT', content: 'for acme' }, "another key of acme, on the other replica, is served acme's answer");
  t.same(await ask(b, GLOBEX), { cache: 'MISS', content: 'for globex' }, "globex is not served acme's answer");
  await sleep(300);
  t.same(await ask(a, GLOBEX), { cache: 'HIT', content: 'for globex' }, 'and then its own');
  t.same(await ask(a, ACME_ONE), { cache: 'HIT', content: 'for acme' });
  t.equal(upstream.requests.length, 2, 'one upstream call per tenant');
});

t.end();
