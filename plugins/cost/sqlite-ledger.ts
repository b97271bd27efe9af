// The embedded store's durable ledger: SQLite (better-sqlite3, WAL) in MODELGATE_DATA_DIR/ledger.db.
// It holds spend per budget period, usage rollups per day/key/provider/model, the alert thresholds
// that fired and the pause, so all of it survives a restart. Settlements are queued in memory and
// written in one transaction per FLUSH_MS (and on close): the request path never waits on the disk,
// and a crash loses at most FLUSH_MS of spend. Alert firings and pauses are rare and written at once.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Logger } from 'pino';
import { dayKey } from './periods.js';
import { entryCounts, METRICS, type UsageEntry, type UsageRow, type UsageStore } from './usage-store.js';

const FLUSH_MS = 1000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS spend (period TEXT PRIMARY KEY, nano INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS usage (
  day TEXT NOT NULL, tenant TEXT NOT NULL, key_id TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL,
  requests INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
  cost_nano INTEGER NOT NULL, cache_hits INTEGER NOT NULL, saved_nano INTEGER NOT NULL,
  PRIMARY KEY (day, tenant, key_id, provider, model)
);
CREATE TABLE IF NOT EXISTS alerts (period TEXT NOT NULL, rule TEXT NOT NULL, fired_at INTEGER NOT NULL, PRIMARY KEY (period, rule));
CREATE TABLE IF NOT EXISTS state (name TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

type Counts = ReturnType<typeof entryCounts>;

export class SqliteLedger implements UsageStore {
  readonly file: string;
  private readonly db: Database.Database;
  private readonly pendingSpend = new Map<string, number>();
  private readonly pendingUsage = new Map<string, { day: string; tenant: string; keyId: string; provider: string; model: string; counts: Counts }>();
  private readonly timer: NodeJS.Timeout;
  private readonly statements;

  constructor(dir: string, private readonly logger: Logger) {
    mkdirSync(dir, { recursive: true });
    this.file = join(dir, 'ledger.db');
    this.db = new Database(this.file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(SCHEMA);
    this.statements = {
      addSpend: this.db.prepare('INSERT INTO spend (period, nano) VALUES (?, ?) ON CONFLICT (period) DO UPDATE SET nano = nano + excluded.nano'),
      spend: this.db.prepare<[string], { nano: number }>('SELECT nano FROM spend WHERE period = ?'),
      addUsage: this.db.prepare(`INSERT INTO usage VALUES (@day, @tenant, @keyId, @provider, @model, @requests, @promptTokens, @completionTokens, @costNano, @cacheHits, @savedNano)
        ON CONFLICT (day, tenant, key_id, provider, model) DO UPDATE SET requests = requests + excluded.requests,
        prompt_tokens = prompt_tokens + excluded.prompt_tokens, completion_tokens = completion_tokens + excluded.completion_tokens,
        cost_nano = cost_nano + excluded.cost_nano, cache_hits = cache_hits + excluded.cache_hits, saved_nano = saved_nano + excluded.saved_nano`),
      usage: this.db.prepare<unknown[], UsageRow>(`SELECT day, tenant, key_id AS keyId, provider, model, requests, prompt_tokens AS promptTokens,
        completion_tokens AS completionTokens, cost_nano AS costNano, cache_hits AS cacheHits, saved_nano AS savedNano
        FROM usage WHERE day >= ? AND day <= ? AND (? IS NULL OR tenant = ?) ORDER BY day`),
      fire: this.db.prepare('INSERT OR IGNORE INTO alerts (period, rule, fired_at) VALUES (?, ?, ?)'),
      getState: this.db.prepare<[string], { value: string }>('SELECT value FROM state WHERE name = ?'),
      setState: this.db.prepare('INSERT INTO state (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value'),
      clearState: this.db.prepare('DELETE FROM state WHERE name = ?'),
    };
    this.timer = setInterval(() => this.flushSafely(), FLUSH_MS);
    this.timer.unref();
  }

  /** Spend recorded for a period key such as `day:2025-01-31`, queued amounts included. */
  spendOf(period: string): number {
    return (this.statements.spend.get(period)?.nano ?? 0) + (this.pendingSpend.get(period) ?? 0);
  }

  addSpend(period: string, nano: number): void {
    if (nano !== 0) this.pendingSpend.set(period, (this.pendingSpend.get(period) ?? 0) + nano);
  }

  record(entry: UsageEntry): void {
    const day = dayKey(entry.at);
    const id = [day, entry.tenant, entry.keyId, entry.provider, entry.model].join('\u0000');
    const current = this.pendingUsage.get(id);
    const counts = entryCounts(entry);
    if (!current) this.pendingUsage.set(id, { day, tenant: entry.tenant, keyId: entry.keyId, provider: entry.provider, model: entry.model, counts });
    else for (const metric of METRICS) current.counts[metric] += counts[metric];
  }

  async query(from: string, to: string, tenant?: string): Promise<UsageRow[]> {
    this.flush();
    return this.statements.usage.all(from, to, tenant ?? null, tenant ?? null);
  }

  /** Records the rule fired for the period, and if it is the first time, sets `state` in the same transaction. */
  fireOnce(period: string, rule: string, state?: { name: string; value: string }): boolean {
    return this.db.transaction(() => {
      const first = this.statements.fire.run(period, rule, Date.now()).changes === 1;
      if (first && state) this.statements.setState.run(state.name, state.value);
      return first;
    })();
  }

  getState(name: string): string | undefined {
    return this.statements.getState.get(name)?.value;
  }

  setState(name: string, value: string | undefined): void {
    if (value === undefined) this.statements.clearState.run(name);
    else this.statements.setState.run(name, value);
  }

  /** Writes everything queued in one transaction. */
  flush(): void {
    if (this.pendingSpend.size === 0 && this.pendingUsage.size === 0) return;
    const spend = [...this.pendingSpend];
    const usage = [...this.pendingUsage.values()];
    this.db.transaction(() => {
      for (const [period, nano] of spend) this.statements.addSpend.run(period, nano);
      for (const row of usage) this.statements.addUsage.run({ day: row.day, tenant: row.tenant, keyId: row.keyId, provider: row.provider, model: row.model, ...row.counts });
    })();
    this.pendingSpend.clear();
    this.pendingUsage.clear();
  }

  private flushSafely(): void {
    try {
      this.flush();
    } catch (error) {
      // Kept queued: the next flush retries (a full disk, a locked file).
      this.logger.error({ err: (error as Error).message, file: this.file }, 'ledger: writing settlements failed');
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.flushSafely();
    this.db.close();
  }
}
