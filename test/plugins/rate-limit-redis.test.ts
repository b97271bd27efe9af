// Rate limits with MODELGATE_STORE=redis: two gateway instances on one Redis enforce one limit, and
// a Redis that stops or freezes mid-run (a private redis-server of this test, never the shared
// one) makes the gateway fall back to local limits — or answer 503 — within a bounded wait, and
// use the shared counters again once Redis answers.
import t, { type Test } from 'tap';
import { Redis } from 'ioredis';
import { scrape } from '../helpers/metrics.js';
import { startGateway, startPair, call, type TestGateway, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { testPrefix, redisEnv, flushPrefix, REDIS_HOST, REDIS_PORT } from '../helpers/redis.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/private-redis.js';
import { sleep } from '../helpers/fake-provider.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import type { FallbackEvent } from '../../core/events.js';

// The shared Redis may be slow on a busy machine: tests that are not about timeouts give it time.
const patient = { REDIS_COMMAND_TIMEOUT: '5000' };

// Every test has its own prefix: the bootstrap key's counters would otherwise carry over.
const prefixes: string[] = [];
function freshPrefix(): string {
  const prefix = testPrefix();
  prefixes.push(prefix);
  return prefix;
}
t.teardown(async () => {
  for (const prefix of prefixes) await flushPrefix(prefix);
});

/** One keyed call; a transport failure reads as status -1. */
function bounded(gateway: TestGateway): Promise<{ status: number }> {
  return call(gateway.url, '/models').catch(() => ({ status: -1 }));
}

async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'hung'> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), ms)));
  try {
    return await Promise.race([promise, hung]);
  } finally {
    clearTimeout(timer);
  }
}

const statusOf = (result: { status: number } | 'hung') => (result === 'hung' ? 'hung' : result.status);

async function keysUnder(prefix: string): Promise<string[]> {
  const redis = new Redis({ host: REDIS_HOST, port: REDIS_PORT });
  try {
    return (await redis.keys(`${prefix}*`)).map((key) => key.slice(prefix.length)).sort();
  } finally {
    redis.disconnect();
  }
}

t.test('two gateway instances sharing Redis enforce one limit, not two', async (t) => {
  const prefix = freshPrefix();
  const env = { ...redisEnv(prefix), ...patient, MODELGATE_STORE: 'redis', MODELGATE_RATE_LIMIT_BURST: '4', MODELGATE_RATE_LIMIT_RPM: '1' };
  const [a, b] = await startPair(t, env);
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) statuses.push((await call((i % 2 === 0 ? a : b).url, '/models')).status);
  t.same(statuses, [200, 200, 200, 200, 429, 429, 429, 429], 'four admitted in all (one from the minute, three from the burst), alternating between the instances');
  const refused = await call(b.url, '/models');
  t.equal(refused.headers.get('x-ratelimit-limit-requests'), '4');
  t.equal(refused.headers.get('x-ratelimit-remaining-requests'), '0');
  t.ok(Number(refused.headers.get('retry-after')) <= 60, 'Retry-After: when the minute window (started on instance a) ends');
  t.same(
    (await keysUnder(prefix)).filter((key) => key.startsWith('rl:')).map((key) => key.split(':')[1]),
    ['burst', 'hour', 'minute'],
    'the counters live in Redis under the prefix, one per limit (tokens were only read)',
  );

  const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => call((i % 2 === 0 ? a : b).url, '/health', { key: null })));
  t.ok(burst.every((r) => r.status === 200), 'public routes are not limited');
});

t.test('concurrent requests through two instances are admitted exactly up to the limit', async (t) => {
  const env = { ...redisEnv(freshPrefix()), ...patient, MODELGATE_STORE: 'redis', MODELGATE_RATE_LIMIT_BURST: '5', MODELGATE_RATE_LIMIT_RPM: '1' };
  const [a, b] = await startPair(t, env);
  const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => call((i % 2 === 0 ? a : b).url, '/models')));
  t.equal(responses.filter((r) => r.status === 200).length, 5);
  t.equal(responses.filter((r) => r.status === 429).length, 15);
  const after = await call(a.url, '/models');
  t.equal(after.status, 429);
  t.equal(after.headers.get('x-ratelimit-remaining-requests'), '0', 'the refused fifteen gave back what they took, and no more');
});

t.test('the hour limit is shared too', async (t) => {
  const env = { ...redisEnv(freshPrefix()), ...patient, MODELGATE_STORE: 'redis', MODELGATE_RATE_LIMIT_BURST: '10', MODELGATE_RATE_LIMIT_RPM: '10', MODELGATE_RATE_LIMIT_RPH: '3' };
  const [a, b] = await startPair(t, env);
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) statuses.push((await call((i % 2 === 0 ? a : b).url, '/models')).status);
  t.same(statuses, [200, 200, 200, 429]);
  t.ok(Number((await call(a.url, '/models')).headers.get('retry-after')) > 3000, 'refused until the hour window ends');
});

t.test('tokens taken through one instance, and corrected by the real usage, count on the other', async (t) => {
  const upstream = await startFakeOpenAI();
  t.teardown(() => upstream.close());
  const env = {
    ...redisEnv(freshPrefix()),
    ...patient,
    ...PROTOCOL_ONLY,
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_STORE: 'redis',
    MODELGATE_RATE_LIMIT_TPM: '1000',
  };
  const [a, b] = await startPair(t, env);
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 500 });
  const answered = await call(a.url, '/chat/completions', { body });
  t.equal(answered.status, 200);
  t.ok(Number(answered.headers.get('x-ratelimit-remaining-tokens')) < 500, 'the estimate (prompt + max_tokens) was taken');
  // The fixture reports 32 tokens used; the correction lands just after the response.
  let remaining = '';
  for (let i = 0; i < 100 && remaining !== '968'; i++) {
    if (i > 0) await sleep(50);
    remaining = (await call(b.url, '/models')).headers.get('x-ratelimit-remaining-tokens') ?? '';
  }
  t.equal(remaining, '968', 'the other instance sees the tokens minute with the real usage');
});

async function privateGateway(t: Test, redis: PrivateRedis, env: Record<string, string> = {}) {
  const gateway = await startGateway({
    ...PROTOCOL_ONLY,
    REDIS_HOST: '127.0.0.1',
    REDIS_PORT: String(redis.port),
    REDIS_KEY_PREFIX: freshPrefix(),
    REDIS_COMMAND_TIMEOUT: '1000',
    MODELGATE_STORE: 'redis',
    MODELGATE_RATE_LIMIT_BURST: '3',
    MODELGATE_RATE_LIMIT_RPM: '1',
    ...env,
  });
  const fallbacks: FallbackEvent[] = [];
  gateway.app.deps.events.on('fallback', (event) => fallbacks.push(event));
  t.teardown(() => gateway.close());
  return { gateway, fallbacks };
}

t.test('a frozen Redis (SIGSTOP) makes requests fall back to local limits within the command timeout (1 s here), and Redis counts again once it wakes', async (t) => {
  const redis = await startPrivateRedis();
  t.teardown(() => redis.stop());
  const { gateway, fallbacks } = await privateGateway(t, redis);
  const refusing = await privateGateway(t, redis, { MODELGATE_RATE_LIMIT_REDIS_FAILURE: 'refuse' });
  t.equal((await bounded(gateway)).status, 200, 'Redis answers: the shared limit is used');
  t.equal((await bounded(gateway)).status, 200);
  t.equal((await bounded(refusing.gateway)).status, 200);
  t.equal(fallbacks.length, 0);

  redis.pause();
  const frozenAt = performance.now();
  const during = await within(bounded(gateway), 10_000);
  const waited = performance.now() - frozenAt;
  t.equal(statusOf(during), 200, 'the request did not hang: the local limiter starts with a fresh allowance');
  // The bound is the 1 s command timeout; the margin is for a busy machine, not for a second wait.
  t.ok(waited < 2500, `answered ${Math.round(waited)} ms after the freeze (command timeout 1000 ms)`);
  t.ok(fallbacks.length >= 1, 'the fallback was emitted');
  t.same(fallbacks[0], { component: 'rate-limit', reason: 'redis_unavailable' });
  const local: Array<{ status: number } | 'hung'> = [];
  for (let i = 0; i < 4; i++) local.push(await within(bounded(gateway), 10_000));
  t.same(local.map(statusOf), [200, 200, 429, 429], 'the local limiter enforces the same limits');
  t.equal(gateway.logs.filter((line) => line.msg === 'rate limits: Redis failed, using local limits').length, 1, 'the outage was logged once');
  t.equal((await scrape(gateway.url)).value('modelgate_store_fallbacks_total', { component: 'rate-limit' }), fallbacks.length, 'and counted in the metrics');

  const refused = await within(
    call(refusing.gateway.url, '/models').catch(() => 'failed' as const),
    10_000,
  );
  t.equal(refused === 'hung' || refused === 'failed' ? refused : refused.status, 503, 'with `refuse`, a frozen Redis means 503, in bounded time');
  if (refused !== 'hung' && refused !== 'failed') {
    t.equal(refused.json.error.message, 'Rate limit store unavailable');
    t.equal(refused.headers.get('retry-after'), '1');
  }
  t.equal(refusing.fallbacks.length, 0, 'refusing is not a fallback');

  redis.resume();
  // Redis is asked again a second after its last failure: call until a request is answered by it.
  let first = { status: 0 };
  for (let i = 0; i < 50; i++) {
    const before = fallbacks.length;
    first = await bounded(gateway);
    if (fallbacks.length === before) break;
    await sleep(300);
  }
  const after = fallbacks.length;
  const shared = [first.status];
  for (let i = 0; i < 2; i++) shared.push((await bounded(gateway)).status);
  // A command sent to the frozen Redis runs when it wakes up, so it may have used its allowance too.
  t.ok(shared.filter((status) => status === 200).length <= 1, `Redis's own counters apply again (two of three were used before the freeze): ${shared}`);
  t.equal(shared.at(-1), 429);
  t.equal(fallbacks.length, after, 'no fallback once Redis answers');
  t.ok(gateway.logs.some((line) => line.msg === 'rate limits: Redis answers again, shared limits restored'), 'the end of the outage was logged');
});

t.test('a stopped Redis makes requests fall back at once; with `refuse` they get 503 instead', async (t) => {
  const redis = await startPrivateRedis();
  t.teardown(() => redis.stop());
  const { gateway, fallbacks } = await privateGateway(t, redis);
  const refusing = await privateGateway(t, redis, { MODELGATE_RATE_LIMIT_REDIS_FAILURE: 'refuse' });
  t.equal((await bounded(gateway)).status, 200);
  t.equal((await bounded(refusing.gateway)).status, 200);
  await redis.stop();
  const stoppedAt = performance.now();
  const during = await within(bounded(gateway), 10_000);
  const waited = performance.now() - stoppedAt;
  t.equal(statusOf(during), 200);
  t.ok(waited < 1000, `answered ${Math.round(waited)} ms after Redis stopped: no command timeout to wait for`);
  t.ok(fallbacks.length >= 1);
  const local: Array<{ status: number } | 'hung'> = [];
  for (let i = 0; i < 3; i++) local.push(await within(bounded(gateway), 10_000));
  t.same(local.map(statusOf), [200, 200, 429], 'the local limits apply while Redis is away');

  const refused = await within(call(refusing.gateway.url, '/models'), 10_000);
  t.not(refused, 'hung');
  const response = refused as Awaited<ReturnType<typeof call>>;
  t.equal(response.status, 503);
  t.equal(response.json.error.message, 'Rate limit store unavailable');
  t.equal(response.headers.get('retry-after'), '1');
  t.equal(refusing.fallbacks.length, 0, 'refusing is not a fallback');
  t.ok(refusing.gateway.logs.some((line) => line.msg === 'rate limits: Redis failed, refusing requests'));
});

t.end();
