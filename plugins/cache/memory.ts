// The in-process backend: an LRU bounded by the bytes it holds (MODELGATE_CACHE_MAX_SIZE), least
// recently used entries evicted first, each entry expiring after the TTL. Expired entries are
// dropped when read and swept on refresh(), so the size the metrics report does not count them.
//
// The bound is on memory really held. An entry is kept in a buffer of its own exact size (encode
// makes one; anything else is copied): a slice of Node's shared 8 KB buffer pool would keep the
// whole slab alive — measured at 3x the entry's size for 1 KB answers, so a 1000 MB cache could
// have held 3-4 GB. Each entry is also charged its fixed cost (key, buffer objects, LRU slots).
import { LRUCache } from 'lru-cache';
import type { CacheBackend } from './backend.js';

/** What one entry costs beyond its bytes (measured: ~520 B of heap objects, ~80 B of allocator overhead). */
export const ENTRY_OVERHEAD_BYTES = 600;

export function memoryBackend(options: { maxBytes: number; ttlMs: number }): CacheBackend {
  let evictions = 0;
  const lru = new LRUCache<string, Buffer>({
    maxSize: options.maxBytes,
    // An entry larger than the whole bound is not stored (lru-cache's maxEntrySize defaults to maxSize).
    sizeCalculation: (value) => value.length + ENTRY_OVERHEAD_BYTES,
    ttl: options.ttlMs,
    dispose: (_value, _key, reason) => {
      if (reason === 'evict') evictions++;
    },
  });
  return {
    get: (key) => lru.get(key),
    set(key, value) {
      lru.set(key, owned(value));
    },
    stats: () => ({ backend: 'memory', entries: lru.size, bytes: lru.calculatedSize, evictions, errors: 0 }),
    async refresh() {
      lru.purgeStale();
    },
  };
}

/** `bytes` in a buffer that holds nothing else (a copy unless it is one already). */
export function owned(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) return bytes;
  const own = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(own);
  return own;
}
