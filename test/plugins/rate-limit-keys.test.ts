// Rate limits per key: a key's own requests_per_minute, requests_per_hour and tokens_per_minute
// replace the gateway's, below or above them; a key's own RPM is a hard cap the global burst never
// lifts; the 429 names the limit that refused and the x-ratelimit-* headers show the key's limits;
// on Redis two replicas hold a key to one limit.
import t from 'tap';
import OpenAI from 'openai';
import { startGateway, call, PROTOCOL_ONLY, GATEWAY_KEY, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import type { FakeProvider } from '../helpers/fake-provider.js';
import { checkError } from '../helpers/schema.js';
import { keyStore } from '../helpers/keys.js';
import { testPrefix, redisEnv, flushPrefix } from '../helpers/redis.js';
import type { KeyStore } from '../../core/key-store.js';

const SLOW = 'uc_slow_key_0123456789abcdef';
const FAST = 'uc_fast_key_0123456789abcdef';
const HOURLY = 'uc_hourly_key_0123456789abcd';
const THRIFTY = 'uc_thrifty_key_0123456789abc';
const keys = keyStore({
  [SLOW]: { limits: { requests_per_minute: 2 } },
  [FAST]: { limits: { requests_per_minute: 6 } },
  [HOURLY]: { limits: { requests_per_hour: 2 } },
  [THRIFTY]: { limits: { tokens_per_minute: 100 } },
});

let upstream: FakeProvider;
t.before(async () => {
  upstream = await startFakeOpenAI();
});
t.after(() => upstream.close());

async function withGateway(env: Record<string, string>, run: (gateway: TestGateway) => Promise<void>, store: KeyStore = keys): Promise<void> {
  const gateway = await startGateway({ ...PROTOCOL_ONLY, OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, ...env }, { keyStores: [store] });
  try {
    await run(gateway);
  } finally {
    await gateway.close();
  }
}

/** Statuses of `count` requests of `key`, one after the other. */
async function statuses(gateway: TestGateway, key: string, count: number): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < count; i++) seen.push((await call(gateway.url, '/models', { key })).status);
  return seen;
}

t.test("a key's own RPM below the gateway's is its limit, and the 429 says which limit refused", async (t) => {
  await withGateway({ MODELGATE_RATE_LIMIT_RPM: '100', MODELGATE_RATE_LIMIT_BURST: '100' }, async (gateway) => {
    const first = await call(gateway.url, '/models', { key: SLOW });
    t.equal(first.headers.get('x-ratelimit-limit-requests'), '2', "the headers show the key's own limit");
    t.equal(first.headers.get('x-ratelimit-remaining-requests'), '1');
    t.same(await statuses(gateway, SLOW, 2), [200, 429]);
    const refused = await call(gateway.url, '/models', { key: SLOW });
    t.equal(refused.status, 429);
    t.equal(checkError(refused.json), null);
    t.equal(refused.json.error.message, 'Rate limit exceeded');
    t.equal(refused.json.error.code, 'rate_limit_exceeded');
    t.equal(refused.json.error.param, 'requests_per_minute');
    t.ok(Number(refused.headers.get('retry-after')) >= 1);
    t.same(await statuses(gateway, GATEWAY_KEY, 5), [200, 200, 200, 200, 200], "another key's limit is untouched");
  });
});

t.test("a key's own RPM above the gateway's lets it send more than the gateway default allows", async (t) => {
  await withGateway({ MODELGATE_RATE_LIMIT_RPM: '2', MODELGATE_RATE_LIMIT_BURST: '2' }, async (gateway) => {
    t.same(await statuses(gateway, GATEWAY_KEY, 3), [200, 200, 429], 'a key without limits of its own has the gateway RPM');
    t.same(await statuses(gateway, FAST, 7), [200, 200, 200, 200, 200, 200, 429], 'the fast key has its 6');
  });
});

t.test("the global burst never lifts a key above its own requests_per_minute", async (t) => {
  await withGateway({ MODELGATE_RATE_LIMIT_RPM: '1', MODELGATE_RATE_LIMIT_BURST: '10' }, async (gateway) => {
    t.same(await statuses(gateway, SLOW, 4), [200, 200, 429, 429], 'two, not ten');
    const refused = await call(gateway.url, '/models', { key: SLOW });
    t.equal(refused.headers.get('x-ratelimit-limit-requests'), '2');
    t.same(await statuses(gateway, GATEWAY_KEY, 11), [...Array(10).fill(200), 429], 'a key without its own RPM has the burst');
  });
});

t.test("a key's own requests_per_hour refuses with param requests_per_hour", async (t) => {
  await withGateway({ MODELGATE_RATE_LIMIT_RPH: '1000' }, async (gateway) => {
    t.same(await statuses(gateway, HOURLY, 2), [200, 200]);
    const refused = await call(gateway.url, '/models', { key: HOURLY });
    t.equal(refused.status, 429);
    t.equal(refused.json.error.param, 'requests_per_hour');
    t.ok(Number(refused.headers.get('retry-after')) > 60, 'it waits for the hour, not the minute');
  });
});

t.test("a key's own tokens_per_minute: the SDK gets a RateLimitError naming tokens_per_minute", async (t) => {
  await withGateway({ MODELGATE_RATE_LIMIT_TPM: '1000000' }, async (gateway) => {
    const client = new OpenAI({ apiKey: THRIFTY, baseURL: gateway.url, maxRetries: 0 });
    const ask = () => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 30 });
    const answered = await ask().withResponse();
    t.equal(answered.response.headers.get('x-ratelimit-limit-tokens'), '100');
    await ask().catch(() => undefined); // may pass or not, depending on the real usage
    const error = await (async () => {
      for (let i = 0; i < 5; i++) {
        try {
          await ask();
        } catch (caught) {
          return caught;
        }
      }
      return undefined;
    })();
    t.ok(error instanceof OpenAI.RateLimitError, 'RateLimitError');
    const body = (error as InstanceType<typeof OpenAI.RateLimitError>).error as { param?: string; type?: string };
    t.equal(body.param, 'tokens_per_minute');
    t.equal(body.type, 'tokens');
    const huge = await call(gateway.url, '/chat/completions', { key: THRIFTY, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 500 }) });
    t.equal(huge.json.error.code, 'request_too_large_for_tpm', "a request over the key's whole TPM is never admitted");
  });
});

t.test('on Redis two replicas hold a key to its own RPM together', async (t) => {
  const prefix = testPrefix();
  t.teardown(() => flushPrefix(prefix));
  const env = { ...PROTOCOL_ONLY, OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_STORE: 'redis', REDIS_COMMAND_TIMEOUT: '5000', ...redisEnv(prefix) };
  const a = await startGateway(env, { keyStores: [keys] });
  const b = await startGateway(env, { keyStores: [keys] });
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  const seen = [...(await statuses(a, FAST, 3)), ...(await statuses(b, FAST, 3)), ...(await statuses(a, FAST, 1)), ...(await statuses(b, FAST, 1))];
  t.same(seen, [200, 200, 200, 200, 200, 200, 429, 429], 'six in all, across both');
  const refused = await call(b.url, '/models', { key: FAST });
  t.equal(refused.json.error.param, 'requests_per_minute');
  t.equal(refused.headers.get('x-ratelimit-limit-requests'), '6');
});

// Listening servers keep the event loop alive: end the root test explicitly so t.after runs.
t.end();
