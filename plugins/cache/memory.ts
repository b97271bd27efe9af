// The in-process backend: an LRU bounded by the bytes it holds (MODELGATE_CACHE_MAX_SIZE), least
// recently used entries evicted first, each entry expiring after the TTL. Expired entries are
// dropped when read and swept on refresh(), so the size the metrics report does not count them.
import { LRUCache } from 'lru-cache';
import type { CacheBackend } from './backend.js';

export function memoryBackend(options: { maxBytes: number; ttlMs: number }): CacheBackend {
  let evictions = 0;
  const lru = new LRUCache<string, Buffer>({
    maxSize: options.maxBytes,
    // An entry larger than the whole bound is not stored (lru-cache's maxEntrySize defaults to maxSize).
    sizeCalculation: (value) => value.length,
    ttl: options.ttlMs,
    dispose: (_value, _key, reason) => {
      if (reason === 'evict') evictions++;
    },
  });
  return {
    get: (key) => lru.get(key),
    set: (key, value) => void lru.set(key, value),
    stats: () => ({ backend: 'memory', entries: lru.size, bytes: lru.calculatedSize, evictions, errors: 0 }),
    async refresh() {
      lru.purgeStale();
    },
  };
}
