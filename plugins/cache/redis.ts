// The shared backend: entries in Redis under REDIS_KEY_PREFIX + `cache:`, expiring after the TTL, so
// every replica serves what any one of them stored. The connection fails fast (no offline queue,
// REDIS_COMMAND_TIMEOUT): Redis away or slow makes a read a miss and a write a no-op, never an
// error or a hang. Its size is counted by a SCAN on refresh(), never per request or per scrape.
import type { Redis } from 'ioredis';
import type { CacheBackend } from './backend.js';
import { KEY_SPACE } from './key.js';

export function redisBackend(redis: Redis, ttlSeconds: number): CacheBackend {
  let errors = 0;
  let entries = 0;
  let bytes = 0;
  // ioredis prefixes the keys of commands, but not SCAN's pattern nor the keys SCAN returns.
  const prefix = redis.options.keyPrefix ?? '';
  const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}${KEY_SPACE}*`;
  const ready = () => {
    // Skips building a rejected command (and its Error) per request while Redis is known to be away.
    if (redis.status === 'ready') return true;
    errors++;
    return false;
  };
  return {
    async get(key) {
      if (!ready()) return undefined;
      try {
        return (await redis.getBuffer(key)) ?? undefined;
      } catch {
        errors++;
        return undefined;
      }
    },
    set(key, value) {
      if (!ready()) return;
      redis.set(key, value, 'EX', ttlSeconds).catch(() => {
        errors++;
      });
    },
    stats: () => ({ backend: 'redis', entries, bytes, evictions: 0, errors }),
    async refresh() {
      if (redis.status !== 'ready') return;
      try {
        let cursor = '0';
        let count = 0;
        let size = 0;
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
          cursor = next;
          if (keys.length === 0) continue;
          const pipeline = redis.pipeline();
          for (const key of keys) pipeline.strlen(key.slice(prefix.length));
          for (const [error, length] of (await pipeline.exec()) ?? []) {
            if (error || typeof length !== 'number' || length === 0) continue; // expired since SCAN saw it
            count++;
            size += length;
          }
        } while (cursor !== '0');
        entries = count;
        bytes = size;
      } catch {
        errors++;
      }
    },
  };
}
