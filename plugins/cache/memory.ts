// The in-process backend: an LRU bounded by the memory its entries really take
// (MODELGATE_CACHE_MAX_SIZE), least recently used entries evicted first, each entry expiring after
// the TTL. Expired entries are dropped when read and swept on refresh(), so the size the metrics
// report does not count them.
//
// An entry is charged what it costs: its blocks (blocks.ts: bytes rounded up to 128-byte blocks,
// plus their chain slots), its key string, and its slots in the LRU's tables. The bytes live in
// slabs allocated once, so evictions make no garbage for them; only the key string and the Map's
// slot turn over (docs/cache.md: memory).
import { LRUCache } from 'lru-cache';
import type { CacheBackend } from './backend.js';
import { BLOCK_COST, BlockStore, blocksFor } from './blocks.js';

/**
 * What an entry costs besides its blocks and key (measured with --expose-gc over 100k entries: the
 * LRU's Map slot and its seven per-entry arrays, with their growth slack).
 */
export const ENTRY_OVERHEAD_BYTES = 160;

/** A one-byte string's heap size: a 16-byte header, its characters rounded up to 8 bytes. */
const keyCost = (key: string) => 16 + Math.ceil(key.length / 8) * 8;

/** What storing `length` bytes under `key` costs. */
export function entryCost(key: string, length: number): number {
  return blocksFor(length) * BLOCK_COST + keyCost(key) + ENTRY_OVERHEAD_BYTES;
}

export function memoryBackend(options: { maxBytes: number; ttlMs: number }): CacheBackend {
  let evictions = 0;
  const blocks = new BlockStore();
  // The value is the entry's first block.
  const lru = new LRUCache<string, number>({
    maxSize: options.maxBytes,
    ttl: options.ttlMs,
    dispose: (head, _key, reason) => {
      blocks.free(head);
      if (reason === 'evict') evictions++;
    },
  });
  return {
    get(key) {
      const head = lru.get(key);
      return head === undefined ? undefined : blocks.read(head);
    },
    set(key, value) {
      lru.delete(key);
      const size = entryCost(key, value.length);
      if (size > options.maxBytes) return; // larger than the whole bound: not stored
      // Room first, so the blocks in use never exceed what the bound allows.
      while (lru.size > 0 && lru.calculatedSize + size > options.maxBytes) lru.pop();
      lru.set(key, blocks.write(value), { size });
    },
    stats: () => ({ backend: 'memory', entries: lru.size, bytes: lru.calculatedSize, evictions, errors: 0 }),
    async refresh() {
      lru.purgeStale();
    },
  };
}
