// The ledger writer: rows are queued in memory (the request path never waits on the database) and
// written in batches, every MODELGATE_LEDGER_FLUSH_INTERVAL ms and on close. One transaction per
// batch inserts the rows (multi-row INSERT … ON CONFLICT DO NOTHING RETURNING id; on SQLite the same
// with statements prepared once, sqlite-ledger.ts) and adds exactly the rows it inserted to the
// hourly and daily rollups (per key, and per model), and to the hourly error and circuit-opening rollups (upserts in
// primary-key order). A batch that
// fails stays queued and is retried with backoff; a retry of a batch that did commit inserts
// nothing and adds nothing, so nothing is counted twice. A batch that keeps failing while the
// database answers is written row by row once, and a row that alone cannot be written is logged
// and set aside, so one bad row never blocks the rest. A crash loses what is queued: at most one
// flush interval of rows while the database answers (docs/storage.md measures it). Past the backlog
// bound, rows that carry no cost (cache hits) are counted and dropped: memory stays bounded, money
// rows are never dropped (the cost guard refuses paid requests instead).
import type { Logger } from 'pino';
import { sql, type Transaction } from 'kysely';
import type { Store } from '../../core/store/database.js';
import type { LedgerTable, ModelRollupTableName, RollupTableName, Tables } from '../../core/store/schema.js';
import { ensurePartitions } from '../../core/store/partitions.js';
import { toRecord, type LedgerRow } from './ledger-row.js';
import { SqliteLedger } from './sqlite-ledger.js';
import { DAY_MS, HOUR_MS, SUM_COLUMNS, KEY_COLUMNS, MODEL_KEY_COLUMNS, byModel, rollUp } from './rollups.js';
import { CIRCUIT_KEY_COLUMNS, ERROR_KEY_COLUMNS, circuitDeltas, errorDeltas } from './error-rollups.js';

/** Rows per transaction, and per INSERT statement (20 columns each: well under both engines' bind limits). */
const BATCH_ROWS = 2000;
/**
 * SQLite writes on the event loop (better-sqlite3 is synchronous): a second's rows at a few thousand
 * requests a second held it for tens of ms in one go, every request waiting behind (the benchmark's
 * p99). Transactions of 200 rows with the loop let go between them: pauses of 1–8 ms instead of 28–45.
 */
const SQLITE_BATCH_ROWS = 200;
const STATEMENT_ROWS = 500;
const MAX_BACKOFF_MS = 30_000;
/** After this many failures in a row of a batch the database otherwise takes, its rows are tried one by one. */
const ROW_BY_ROW_AFTER = 3;
/** …unless the first rows all fail alone too: then the fault is not in the rows. */
const SYSTEMIC_AFTER = 5;

/** Runs inside a batch's transaction, after its rows were inserted, with the rows that were new. */
export type InsertedHook = (trx: Transaction<Tables>, inserted: readonly LedgerTable[]) => Promise<void>;

export interface LedgerOptions {
  flushMs: number;
  /** Rows that may wait unwritten; past it `accepting` turns false and the cost guard refuses paid requests. */
  maxBacklog: number;
}

export class LedgerWriter {
  private queue: LedgerRow[] = [];
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  /** Failures in a row of the batch at the head of the queue. */
  private batchFailures = 0;
  private closed = false;
  private dropped = 0;
  /** The Redis budget store's check for rows counted in an epoch Redis has since lost (redis-budget.ts). */
  onInserted: InsertedHook | undefined;
  private readonly sqlite: SqliteLedger | undefined;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly options: LedgerOptions,
  ) {
    this.sqlite = store.sqlite && new SqliteLedger(store.sqlite);
    this.schedule(options.flushMs);
  }

  /** Rows queued and not yet written. */
  get backlog(): number {
    return this.queue.length;
  }

  /** False while the backlog is full: the database has not taken writes for a while. */
  get accepting(): boolean {
    return this.queue.length < this.options.maxBacklog;
  }

  add(rows: readonly LedgerRow[]): void {
    if (this.closed) {
      // A request that settled after shutdown closed the ledger (a stream cut by the shutdown timeout).
      const nano = rows.reduce((sum, row) => sum + row.costNano, 0);
      this.logger.error({ rows: rows.length, usd: nano / 1e9 }, 'ledger: rows settled after the ledger closed were not written');
      return;
    }
    const full = !this.accepting;
    for (const row of rows) {
      if (full && row.costNano === 0) this.dropped++;
      else this.queue.push(row);
    }
  }

  /** Writes every row queued when it is called (a flush already running is waited for first). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.queue.length === 0) return;
    this.flushing = this.writeAll().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async writeAll(): Promise<void> {
    const target = this.queue.length;
    const size = this.sqlite ? SQLITE_BATCH_ROWS : BATCH_ROWS;
    let written = 0;
    while (written < target && this.queue.length > 0) {
      if (written > 0 && this.sqlite) await new Promise((resolve) => setImmediate(resolve));
      const batch = this.queue.slice(0, size);
      await this.write(batch);
      // Rows added while the batch was written sit behind it: only the batch leaves the queue.
      this.queue = this.queue.slice(batch.length);
      written += batch.length;
    }
  }

  /** Writes `batch` (all of it, but for rows that cannot be written at all: those are set aside). */
  private async write(batch: readonly LedgerRow[]): Promise<void> {
    const records = batch.map(toRecord);
    try {
      await this.writeRecords(records);
    } catch (error) {
      if (++this.batchFailures < ROW_BY_ROW_AFTER || !(await this.answers())) throw error;
      await this.rowByRow(records, error as Error);
    }
    this.batchFailures = 0;
  }

  private async writeRecords(records: LedgerTable[]): Promise<void> {
    try {
      await this.transaction(records);
    } catch (error) {
      // PostgreSQL: a row whose month has no partition (a clock a little off, a sweeper that has not run).
      if (this.store.engine !== 'postgres' || (error as { code?: string }).code !== '23514') throw error;
      const times = records.map((record) => record.at);
      await ensurePartitions(this.store.db, Math.min(...times), Math.max(...times));
      await this.transaction(records);
    }
  }

  private async answers(): Promise<boolean> {
    return sql`select 1`.execute(this.store.db).then(
      () => true,
      () => false,
    );
  }

  /** Writes each row alone; rows that fail alone while others succeed are set aside (logged in full). */
  private async rowByRow(records: LedgerTable[], cause: Error): Promise<void> {
    const failed: Array<{ record: LedgerTable; error: string }> = [];
    for (const [i, record] of records.entries()) {
      try {
        await this.writeRecords([record]);
      } catch (error) {
        failed.push({ record, error: (error as Error).message });
        // The first rows all failing alone as well: the fault is the database's, keep everything.
        if (failed.length === i + 1 && failed.length >= SYSTEMIC_AFTER) throw cause;
      }
    }
    if (failed.length === records.length) throw cause;
    for (const { record, error } of failed) this.logger.error({ err: error, row: record }, 'ledger: a row that cannot be written was set aside');
  }

  private transaction(records: LedgerTable[]): Promise<void> {
    return this.store.db.transaction().execute(async (trx) => {
      if (this.sqlite) {
        // SQLite: the transaction's connection is this handle; prepared once, each row is a bind
        // and a step (building and compiling a 500-row statement per batch cost ~3% of the
        // gateway's CPU per request in a profile).
        const fresh = this.sqlite.write(records);
        if (fresh.length > 0) await this.onInserted?.(trx, fresh);
        return;
      }
      const inserted = new Set<string>();
      for (let i = 0; i < records.length; i += STATEMENT_ROWS) {
        const rows = await trx
          .insertInto('ledger')
          .values(records.slice(i, i + STATEMENT_ROWS))
          .onConflict((conflict) => conflict.columns(['at', 'id']).doNothing())
          .returning('id')
          .execute();
        for (const row of rows) inserted.add(row.id);
      }
      const fresh = records.filter((record) => inserted.has(record.id));
      if (fresh.length === 0) return;
      const hourly = rollUp(fresh, HOUR_MS);
      const daily = rollUp(fresh, DAY_MS);
      await upsert(trx, 'usage_hourly', hourly, KEY_COLUMNS);
      await upsert(trx, 'usage_daily', daily, KEY_COLUMNS);
      await upsert(trx, 'usage_hourly_models', byModel(hourly), MODEL_KEY_COLUMNS);
      await upsert(trx, 'usage_daily_models', byModel(daily), MODEL_KEY_COLUMNS);
      await upsertCounts(trx, 'usage_errors_hourly', errorDeltas(fresh), ERROR_KEY_COLUMNS, 'count');
      await upsertCounts(trx, 'circuit_openings_hourly', circuitDeltas(fresh), CIRCUIT_KEY_COLUMNS, 'openings');
      await this.onInserted?.(trx, fresh);
    });
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    try {
      await this.flush();
      if (this.failures > 0) this.logger.info({ failures: this.failures }, 'ledger: the database takes writes again; the backlog is written');
      this.failures = 0;
      if (this.dropped > 0) {
        this.logger.warn({ rows: this.dropped }, 'ledger: rows without a cost (cache hits) were dropped while the backlog was full');
        this.dropped = 0;
      }
    } catch (error) {
      this.failures++;
      // Once per streak at warn, then every tenth failure: a database that is away for an hour does not flood the log.
      if (this.failures === 1 || this.failures % 10 === 0) {
        this.logger.warn({ err: (error as Error).message, backlog: this.queue.length, failures: this.failures }, 'ledger: writing a batch failed; kept and retried');
      }
    }
    this.schedule(this.failures === 0 ? this.options.flushMs : Math.min(MAX_BACKOFF_MS, this.options.flushMs * 2 ** Math.min(this.failures, 10)));
  }

  /** Stops the timer and writes what is queued; rows that still cannot be written are reported, not hidden. */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.closed = true;
    try {
      await this.flush();
    } catch (error) {
      const nano = this.queue.reduce((sum, row) => sum + row.costNano, 0);
      this.logger.error({ err: (error as Error).message, rows: this.queue.length, usd: nano / 1e9 }, 'ledger: rows never written to the database');
    }
  }
}

async function upsert(trx: Transaction<Tables>, table: RollupTableName | ModelRollupTableName, deltas: ReadonlyArray<object>, keys: readonly string[]): Promise<void> {
  for (let i = 0; i < deltas.length; i += STATEMENT_ROWS) {
    await trx
      .insertInto(table)
      .values(deltas.slice(i, i + STATEMENT_ROWS) as never)
      .onConflict((conflict) =>
        conflict.columns(keys as never).doUpdateSet((eb) => Object.fromEntries(SUM_COLUMNS.map((column) => [column, eb(eb.ref(`${table}.${column}` as never), '+', eb.ref(`excluded.${column}` as never))])) as never),
      )
      .execute();
  }
}

/** Upserts rows of a table with one count column: `count` added on a conflict of `keys`. */
async function upsertCounts<T extends 'usage_errors_hourly' | 'circuit_openings_hourly'>(
  trx: Transaction<Tables>,
  table: T,
  deltas: ReadonlyArray<Tables[T]>,
  keys: ReadonlyArray<string>,
  count: string,
): Promise<void> {
  for (let i = 0; i < deltas.length; i += STATEMENT_ROWS) {
    await trx
      .insertInto(table)
      .values(deltas.slice(i, i + STATEMENT_ROWS) as never)
      .onConflict((conflict) => conflict.columns(keys as never).doUpdateSet((eb) => ({ [count]: eb(eb.ref(`${table}.${count}` as never), '+', eb.ref(`excluded.${count}` as never)) }) as never))
      .execute();
  }
}
