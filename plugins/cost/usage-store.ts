// Usage rollups: per UTC day, tenant, key, provider and model — requests, tokens, cost, cache hits
// and what they saved. The embedded store keeps them in SQLite (sqlite-ledger.ts), the Redis store
// in one hash per day (redis-usage.ts). Recording never waits on a database.

export interface UsageEntry {
  at: number;
  /** 1, or 0 for the cost of a call the request moved on from (the request is counted once). */
  requests: number;
  tenant: string;
  keyId: string;
  provider: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  /** nano-dollars billed (0 for a cache hit). */
  costNano: number;
  cacheHit: boolean;
  /** nano-dollars a cache hit saved. */
  savedNano: number;
}

export interface UsageRow {
  day: string;
  tenant: string;
  keyId: string;
  provider: string;
  model: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  costNano: number;
  cacheHits: number;
  savedNano: number;
}

export interface UsageStore {
  record(entry: UsageEntry): void;
  /** Rows of the days `from`..`to` (`YYYY-MM-DD`, inclusive), of one tenant if given. */
  query(from: string, to: string, tenant?: string): Promise<UsageRow[]>;
  close(): Promise<void>;
}

export const METRICS = ['requests', 'promptTokens', 'completionTokens', 'costNano', 'cacheHits', 'savedNano'] as const;

export function entryCounts(entry: UsageEntry): Record<(typeof METRICS)[number], number> {
  return {
    requests: entry.requests,
    promptTokens: entry.promptTokens,
    completionTokens: entry.completionTokens,
    costNano: entry.costNano,
    cacheHits: entry.cacheHit ? 1 : 0,
    savedNano: entry.savedNano,
  };
}
