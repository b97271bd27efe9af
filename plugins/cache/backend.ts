// Where cached answers are kept: bytes under a key, for MODELGATE_CACHE_TTL. A backend never throws
// and never makes a request wait long: a failure is a miss (get) or a skipped store (set), counted in
// its stats, which the metrics report.
import type { CacheStatsSource } from '../../core/cache-stats.js';

export interface CacheBackend extends CacheStatsSource {
  get(key: string): Buffer | undefined | Promise<Buffer | undefined>;
  set(key: string, value: Buffer): void;
}
