// The Redis connection shared by every Redis-backed part (rate limits, budgets, cache): REDIS_URL
// or host/port/password/db, keys under REDIS_KEY_PREFIX. Commands fail fast instead of queueing
// while Redis is away (no offline queue, a command timeout), so callers can fall back in bounded time.
// The timeout is measured on Redis, not on a busy event loop (core/redis-timeout.ts).
import type { Redis } from 'ioredis';
import { loopAwareRedis } from './redis-timeout.js';
import type { Logger } from 'pino';
import { defineSettings, type SettingsOf } from './settings.js';

export const redisSettings = defineSettings({
  REDIS_URL: { type: 'string', pattern: '^rediss?://', hint: 'be a redis:// or rediss:// URL', secret: true, description: 'Redis URL; replaces REDIS_HOST, REDIS_PORT, REDIS_PASSWORD and REDIS_DB.' },
  REDIS_HOST: { type: 'string', default: 'localhost', description: 'Redis host.' },
  REDIS_PORT: { type: 'integer', default: 6379, minimum: 1, maximum: 65535, description: 'Redis port.' },
  REDIS_PASSWORD: { type: 'string', secret: true, description: 'Redis password.' },
  REDIS_DB: { type: 'integer', default: 0, minimum: 0, description: 'Redis database number.' },
  REDIS_KEY_PREFIX: { type: 'string', default: 'modelgate:', description: 'Prefix of every key the gateway writes.' },
  REDIS_COMMAND_TIMEOUT: {
    type: 'integer',
    default: 200,
    minimum: 1,
    description:
      'ms a Redis command may take before the caller falls back (rate limits to a local limiter, the cache to a miss). Time the gateway\'s own event loop was stalled past the deadline is added to it (at most 10 × this in all), so a busy gateway does not take a healthy Redis for a dead one.',
  },
});

export type RedisSettings = SettingsOf<typeof redisSettings>;

/** One connection, shared by every Redis-backed part: its log lines name no one part. */
export function createRedis(settings: RedisSettings, logger: Logger): Redis {
  const options = {
    keyPrefix: settings.REDIS_KEY_PREFIX,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    lazyConnect: false,
    connectTimeout: 2000,
    retryStrategy: (times: number) => Math.min(times * 200, 2000),
    // No enableAutoPipelining: ioredis keeps one auto-pipeline in flight per connection, so a
    // command issued meanwhile waits for the whole batch before its REDIS_COMMAND_TIMEOUT even
    // starts (measured: 354 ms to time out at 200 against a Redis that stopped answering).
  };
  const LoopAwareRedis = loopAwareRedis();
  const redis = settings.REDIS_URL
    ? new LoopAwareRedis(settings.REDIS_URL, options)
    : new LoopAwareRedis({ ...options, host: settings.REDIS_HOST, port: settings.REDIS_PORT, password: settings.REDIS_PASSWORD, db: settings.REDIS_DB });
  redis.commandTimeoutMs = settings.REDIS_COMMAND_TIMEOUT;
  let down = false;
  redis.on('error', (error) => {
    if (!down) logger.warn({ err: error.message }, 'redis unavailable');
    down = true;
  });
  redis.on('ready', () => {
    if (down) logger.info('redis available again');
    down = false;
  });
  return redis;
}

/**
 * Resolves once the connection is ready: true; false when a connection attempt fails first, or
 * after `ms`. Without an offline queue, commands sent before the first connection completes fail;
 * plugins await this at boot so the first requests are not answered by their fallbacks. A Redis
 * that is down at boot neither stops the gateway from starting nor holds its boot for `ms`.
 */
export function waitUntilReady(redis: Redis, ms: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  // Every part waits at boot on the one connection: they share the first wait, so a Redis that
  // cannot be reached delays the boot once, not once per part.
  let waiting = firstWaits.get(redis);
  if (!waiting) firstWaits.set(redis, (waiting = readyWithin(redis, ms)));
  return waiting;
}

const firstWaits = new WeakMap<Redis, Promise<boolean>>();

function readyWithin(redis: Redis, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ready: boolean) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('error', onError);
      resolve(ready);
    };
    const onReady = () => done(true);
    const onError = () => done(false);
    const timer = setTimeout(() => done(false), ms);
    redis.on('ready', onReady);
    redis.on('error', onError);
  });
}
