// The response cache's own numbers — size, evictions, backend errors — which only the cache knows
// and the metrics report. The cache plugin provides its source when it is built; the metrics plugin
// reads it on every scrape and asks it, every MODELGATE_METRICS_INTERVAL, to refresh what is costly
// to compute (a SCAN of Redis). It lives in PluginDeps so neither plugin imports the other.

export interface CacheStats {
  backend: 'memory' | 'redis';
  /** Entries stored now (for Redis: as of the last refresh, shared by every replica). */
  entries: number;
  /** Bytes those entries take, compressed if compression is on. */
  bytes: number;
  /** Entries dropped to stay within the size bound, since start. */
  evictions: number;
  /** Backend operations that failed (Redis away or slow) and became a miss or a skipped store, since start. */
  errors: number;
}

export interface CacheStatsSource {
  stats(): CacheStats;
  /** Recomputes what is too costly to compute per scrape; never rejects. */
  refresh(): Promise<void>;
}

export class CacheStatsBoard {
  private source: CacheStatsSource | undefined;

  provide(source: CacheStatsSource): void {
    this.source = source;
  }

  /** Undefined when no cache is running. */
  stats(): CacheStats | undefined {
    return this.source?.stats();
  }

  refresh(): Promise<void> {
    return this.source ? this.source.refresh() : Promise.resolve();
  }
}
