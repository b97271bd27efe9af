// Usage rollups in Redis, shared by replicas: one hash per UTC day, a field per
// tenant/key/provider/model/metric, incremented after each request (never awaited by it). Kept
// KEEP_DAYS days.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { dayKey, daysBetween } from './periods.js';
import { entryCounts, METRICS, type UsageEntry, type UsageRow, type UsageStore } from './usage-store.js';

const KEEP_DAYS = 400;
const SEP = '\t';

export class RedisUsage implements UsageStore {
  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
  ) {}

  record(entry: UsageEntry): void {
    const key = `usage:${dayKey(entry.at)}`;
    const base = [entry.tenant, entry.keyId, entry.provider, entry.model].map((part) => part.replaceAll(SEP, ' ')).join(SEP);
    const counts = entryCounts(entry);
    const pipeline = this.redis.pipeline();
    for (const metric of METRICS) if (counts[metric] !== 0) pipeline.hincrby(key, `${base}${SEP}${metric}`, counts[metric]);
    pipeline.expire(key, KEEP_DAYS * 86_400);
    pipeline.exec().catch((error: Error) => this.logger.warn({ err: error.message }, 'usage: rollup not recorded, Redis failed'));
  }

  async query(from: string, to: string, tenant?: string): Promise<UsageRow[]> {
    const days = daysBetween(Date.parse(`${from}T00:00:00Z`), Date.parse(`${to}T00:00:00Z`));
    const pipeline = this.redis.pipeline();
    for (const day of days) pipeline.hgetall(`usage:${day}`);
    const results = (await pipeline.exec()) ?? [];
    const rows: UsageRow[] = [];
    days.forEach((day, i) => {
      const [error, hash] = results[i] ?? [];
      if (error) throw error;
      const byRow = new Map<string, UsageRow>();
      for (const [field, value] of Object.entries((hash ?? {}) as Record<string, string>)) {
        const parts = field.split(SEP);
        const metric = parts.pop() as (typeof METRICS)[number];
        const [rowTenant, keyId, provider, model] = parts as [string, string, string, string];
        if (tenant !== undefined && rowTenant !== tenant) continue;
        const id = parts.join(SEP);
        let row = byRow.get(id);
        if (!row) byRow.set(id, (row = { day, tenant: rowTenant, keyId, provider, model, requests: 0, promptTokens: 0, completionTokens: 0, costNano: 0, cacheHits: 0, savedNano: 0 }));
        if ((METRICS as readonly string[]).includes(metric)) row[metric] = Number(value);
      }
      rows.push(...byRow.values());
    });
    return rows;
  }

  async close(): Promise<void> {}
}
