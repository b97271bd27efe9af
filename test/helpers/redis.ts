// The real Redis for tests of Redis-backed behaviour (never a mock): where it is, whether a server
// answers PING (test/setup/redis.ts asks before any test runs, private-redis.ts asks its own), and a
// key prefix per test file, so files running in parallel never see each other's keys.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createServer } from 'node:net';

export const REDIS_HOST = '127.0.0.1';
export const REDIS_PORT = 6379;

/** Whether a Redis server on `port` answers PING (after AUTH with `password`); false (never a throw) when nothing listens or it does not answer. */
export async function answersPing(port = REDIS_PORT, password?: string): Promise<boolean> {
  const redis = new Redis({ host: REDIS_HOST, port, password, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/** A prefix no other test uses, e.g. `modelgate-test:3f9a1c:`. */
export function testPrefix(): string {
  return `modelgate-test:${randomBytes(4).toString('hex')}:`;
}

/** Settings that point the gateway at the test Redis under `prefix`. */
export function redisEnv(prefix: string): Record<string, string> {
  return { REDIS_HOST, REDIS_PORT: String(REDIS_PORT), REDIS_KEY_PREFIX: prefix };
}

/** Deletes every key under `prefix`. */
export async function flushPrefix(prefix: string): Promise<void> {
  const redis = new Redis({ host: REDIS_HOST, port: REDIS_PORT, lazyConnect: true });
  await redis.connect();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
  redis.disconnect();
}

/** A local port nobody listens on (a Redis that is down). */
export function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
