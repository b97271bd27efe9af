// Rate limits with MODELGATE_STORE=redis: two gateway instances on one Redis enforce one limit, and
// a Redis that stops or freezes mid-run (a private redis-server of this test, never the shared
// one) makes the gateway fall back to local limits — or answer 503 — within a bounded wait.
import t, { type Test } from 'tap';
import { startGateway, call, type TestGateway, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { testPrefix, redisEnv, flushPrefix } from '../helpers/redis.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/private-redis.js';
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

t.test('two gateway instances sharing Redis enforce one limit, not two', async (t) => {
  const env = { ...redisEnv(freshPrefix()), ...patient, MODELGATE_STORE: 'redis', MODELGATE_RATE_LIMIT_BURST: '4', MODELGATE_RATE_LIMIT_RPM: '1' };
  const a = await startGateway(env);
  const b = await startGateway(env);
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) statuses.push((await call((i % 2 === 0 ? a : b).url, '/models')).status);
  t.same(statuses, [200, 200, 200, 200, 429, 429, 429, 429], 'four admitted in all, alternating between the instances');
  const remaining = await call(b.url, '/models');
  t.equal(remaining.headers.get('x-ratelimit-remaining-requests'), '0');
  t.match(remaining.headers.get('x-ratelimit-reset-requests'), /^(3m[\d.]+s|4m0s)$/, 'four used at 1 RPM: full again within four minutes');

  const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => call((i % 2 === 0 ? a : b).url, '/health', { key: null })));
  t.ok(burst.every((r) => r.status === 200), 'public routes are not limited');
});

t.test('concurrent requests through two instances are admitted exactly up to the limit', async (t) => {
  const env = { ...redisEnv(freshPrefix()), ...patient, MODELGATE_STORE: 'redis', MODELGATE_RATE_LIMIT_BURST: '5', MODELGATE_RATE_LIMIT_RPM: '1' };
  const a = await startGateway(env);
  const b = await startGateway(env);
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => call((i % 2 === 0 ? a : b).url, '/models')));
  t.equal(responses.filter((r) => r.status === 200).length, 5);
  t.equal(responses.filter((r) => r.status === 429).length, 15);
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

t.test('a frozen Redis (SIGSTOP) makes requests fall back to a local limiter within the command timeout (1 s here)', async (t) => {
  const redis = await startPrivateRedis();
  t.teardown(() => redis.stop());
  const { gateway, fallbacks } = await privateGateway(t, redis);
  t.equal((await bounded(gateway)).status, 200, 'Redis answers: the shared limit is used');
  t.equal((await bounded(gateway)).status, 200);
  t.equal(fallbacks.length, 0);

  redis.pause();
  const during = await within(bounded(gateway), 10_000);
  t.not(during, 'hung', 'the request did not hang on the frozen Redis');
  t.equal(during === 'hung' ? 'hung' : during.status, 200, 'the local limiter starts with a fresh allowance');
  t.ok(fallbacks.length >= 1, 'the fallback was counted');
  t.same(fallbacks[0], { component: 'rate-limit', reason: 'redis_unavailable' });
  const local: Array<{ status: number } | 'hung'> = [];
  for (let i = 0; i < 4; i++) local.push(await within(bounded(gateway), 10_000));
  t.same(
    local.map((r) => (r === 'hung' ? 'hung' : r.status)),
    [200, 200, 429, 429],
    'the local limiter enforces the same limits',
  );
  t.ok(gateway.logs.some((line) => line.msg === 'rate limits: Redis failed, using local limits'), 'the outage was logged');

  redis.resume();
  // Redis is asked again a second after its last failure: call until one is answered by it.
  let first = { status: 0 };
  for (let i = 0; i < 50; i++) {
    const before = fallbacks.length;
    first = await bounded(gateway);
    if (fallbacks.length === before) break;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  const after = fallbacks.length;
  const shared = [first.status];
  for (let i = 0; i < 2; i++) shared.push((await bounded(gateway)).status);
  // Commands sent to the frozen Redis run when it wakes up, so they may have used its allowance too.
  t.ok(shared.filter((status) => status === 200).length <= 1, `Redis's own counter applies again (two of three were used before the freeze): ${shared}`);
  t.equal(shared.at(-1), 429);
  t.equal(fallbacks.length, after, 'no fallback once Redis answers');
});

t.test('a stopped Redis makes requests fall back at once; with `refuse` they get 503 instead', async (t) => {
  const redis = await startPrivateRedis();
  t.teardown(() => redis.stop());
  const { gateway, fallbacks } = await privateGateway(t, redis);
  const refusing = await privateGateway(t, redis, { MODELGATE_RATE_LIMIT_REDIS_FAILURE: 'refuse', MODELGATE_API_KEY: 'uc_refusing_key_0001' });
  t.equal((await bounded(gateway)).status, 200);
  await redis.stop();
  const during = await within(bounded(gateway), 10_000);
  t.not(during, 'hung');
  t.equal(during === 'hung' ? 'hung' : during.status, 200);
  t.ok(fallbacks.length >= 1);

  const refused = await within(call(refusing.gateway.url, '/models', { key: 'uc_refusing_key_0001' }), 10_000);
  t.not(refused, 'hung');
  const response = refused as Awaited<ReturnType<typeof call>>;
  t.equal(response.status, 503);
  t.equal(response.json.error.message, 'Rate limit store unavailable');
  t.equal(refusing.fallbacks.length, 0, 'refusing is not a fallback');
});

t.end();
