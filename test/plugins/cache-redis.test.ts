// The response cache on Redis: shared by gateway instances, entries expiring in Redis, and a Redis
// that is away or goes away making requests misses, never errors. The shared test Redis is used under
// this file's own key prefix; outages are staged on a private redis-server or a port nobody listens on.
import t from 'tap';
import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import type OpenAI from 'openai';
import { startGateway, startPair, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { sleep, type FakeProvider } from '../helpers/fake-provider.js';
import { checkChunk } from '../helpers/schema.js';
import { REDIS_HOST, REDIS_PORT, closedPort, flushPrefix, redisEnv, testPrefix } from '../helpers/redis.js';
import { scrape } from '../helpers/metrics.js';

const prefix = testPrefix();
let upstream: FakeProvider;
let redis: Redis;

t.before(async () => {
  upstream = await startFakeOpenAI();
  redis = new Redis({ host: REDIS_HOST, port: REDIS_PORT });
});
t.after(async () => {
  await upstream.close();
  await flushPrefix(prefix);
  redis.disconnect();
});
t.beforeEach(() => upstream.reset());

const redisCacheEnv = (extra: Record<string, string> = {}) => ({
  OPENAI_API_KEY: PROVIDER_KEYS.openai,
  OPENAI_BASE_URL: `${upstream.url}/v1`,
  MODELGATE_CACHE_TYPE: 'redis',
  ...extra,
});

const ask = (question: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: question }] });

async function complete(gateway: TestGateway, question: string) {
  const { data, response } = await gateway.client().chat.completions.create({ ...ask(question), stream: false }).withResponse();
  return { data, cache: response.headers.get('x-modelgate-cache') };
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (let i = 0; i < 200 && !done(value); i++) {
    await sleep(50);
    value = await read();
  }
  return value;
}

const cacheKeys = () => redis.keys(`${prefix}cache:*`);


t.test('a second gateway answers from what the first stored in Redis, without calling the provider', async (t) => {
  const env = redisCacheEnv({ ...redisEnv(prefix), MODELGATE_METRICS_INTERVAL: '1000' });
  const [first, second] = await startPair(t, env);

  const miss = await complete(first, 'Shared between replicas');
  t.equal(miss.cache, 'MISS');
  const keys = await until(cacheKeys, (found) => found.length === 1);
  t.equal(keys.length, 1, 'stored under REDIS_KEY_PREFIX + cache:');
  const ttl = await redis.ttl(keys[0]!);
  t.ok(ttl > 3500 && ttl <= 3600, `expires after MODELGATE_CACHE_TTL (${ttl} s left)`);

  const hit = await complete(second, 'Shared between replicas');
  t.equal(hit.cache, 'HIT');
  t.same(hit.data, miss.data);
  t.equal(upstream.requests.length, 1);

  const stream = await second.client().chat.completions.create({ ...ask('Shared between replicas'), stream: true });
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  for (const chunk of chunks) t.equal(checkChunk(chunk), null);
  t.equal(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), 'The capital of France is Paris.');
  t.equal(upstream.requests.length, 1, 'the stream was replayed from Redis too');

  const entries = await until(
    async () => (await scrape(second.url)).value('modelgate_cache_entries', { backend: 'redis' }),
    (value) => value === 1,
  );
  t.equal(entries, 1, 'the entry count comes from Redis every MODELGATE_METRICS_INTERVAL');
  const size = (await scrape(second.url)).value('modelgate_cache_size_bytes', { backend: 'redis' });
  t.equal(size, await redis.strlen(keys[0]!));
});

t.test('with nothing listening on the Redis port, requests are served as misses', async (t) => {
  const gateway = await startGateway(redisCacheEnv({ REDIS_HOST, REDIS_PORT: String(await closedPort()), REDIS_KEY_PREFIX: prefix }));
  t.teardown(() => gateway.close());
  for (let i = 0; i < 2; i++) {
    const answer = await complete(gateway, 'Redis is away');
    t.equal(answer.cache, 'MISS');
    t.equal(answer.data.choices[0]!.message.content, 'The capital of France is Paris.');
  }
  t.equal(upstream.requests.length, 2);
  t.ok((await scrape(gateway.url)).value('modelgate_cache_errors_total')! >= 2, 'the failed lookups are counted');
});

t.test('a Redis that freezes or goes away turns hits into misses, never into errors or hangs', async (t) => {
  const port = await closedPort();
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const exited = new Promise((resolve) => server.once('exit', resolve));
  t.teardown(async () => {
    if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
    await exited;
  });
  const probe = new Redis({ host: REDIS_HOST, port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => 100 });
  probe.on('error', () => {});
  t.teardown(() => probe.disconnect());
  t.equal(await until(() => probe.ping().catch(() => 'down'), (reply) => reply === 'PONG'), 'PONG', 'the private redis-server is up');

  const gateway = await startGateway(redisCacheEnv({ REDIS_HOST, REDIS_PORT: String(port), REDIS_KEY_PREFIX: prefix }));
  t.teardown(() => gateway.close());
  t.equal((await complete(gateway, 'Before the outage')).cache, 'MISS');
  t.equal((await complete(gateway, 'Before the outage')).cache, 'HIT');

  // Frozen: connected but silent. Lookups give up after REDIS_COMMAND_TIMEOUT instead of hanging.
  server.kill('SIGSTOP');
  const frozen = await complete(gateway, 'Before the outage');
  t.equal(frozen.cache, 'MISS');
  t.equal(frozen.data.choices[0]!.message.content, 'The capital of France is Paris.');
  server.kill('SIGCONT');

  server.kill('SIGKILL');
  await exited;
  const gone = await complete(gateway, 'Before the outage');
  t.equal(gone.cache, 'MISS');
  t.equal(gone.data.choices[0]!.message.content, 'The capital of France is Paris.');
  t.equal(upstream.requests.length, 3);
});

// Listening servers keep the event loop alive: end the root test explicitly so t.after runs.
t.end();
