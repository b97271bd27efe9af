// The real Redis for tests of Redis-backed behaviour (never a mock). test/setup/redis.ts makes sure
// one answers on 127.0.0.1:6379 before any test runs; each test file takes its own key prefix so
// files running in parallel never see each other's keys.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const REDIS_HOST = '127.0.0.1';
export const REDIS_PORT = 6379;

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
