// The retention sweeper: removes ledger rows older than MODELGATE_LEDGER_RETENTION days, daily
// rollups older than MODELGATE_METRICS_RETENTION and hourly ones older than
// MODELGATE_METRICS_HOURLY_RETENTION (each with its model rollups; the hourly error and circuit-opening
// rollups go with the hourly ones), and alert firings of periods long over — in small steps,
// never one giant DELETE that locks a table. PostgreSQL drops whole monthly ledger partitions
// (partitions.ts), so ledger rows live between N days and N days plus a month; SQLite deletes in
// batches of BATCH rows with a pause between them, then hands the freed pages back (incremental
// vacuum). Request records older than MODELGATE_REQUEST_RETENTION go BATCH at a time on both engines
// (SQLite by rowid, PostgreSQL by id, oldest first via the created_at index). Rollups go one bucket (an hour or a day) per statement. It runs an hour after another,
// on one replica at a time: the one holding the `retention` lease (lease.ts).
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Store } from './database.js';
import type { ModelRollupTableName, RollupTableName } from './schema.js';
import type { StoreSettings } from './settings.js';
import type { RecordSettings } from '../records/settings.js';
import { dropPartitionsBefore, ensurePartitions, monthStart } from './partitions.js';
import { releaseLease, takeLease } from './lease.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Rows one SQLite DELETE removes; each runs in a few ms, and requests are served between them. */
const BATCH = 5000;
const VACUUM_PAGES = 2000;
/** Fired alert rules are kept for periods that may still matter (this month and the last). */
const ALERT_KEEP_MS = 62 * DAY_MS;
const LEASE = 'retention';
/** MODELGATE_REQUEST_RETENTION's default, for a sweeper built without it. */
const REQUEST_RETENTION_DAYS = 30;

export interface SweepReport {
  /** False when another replica holds the lease. */
  ran: boolean;
  ledgerRowsDeleted: number;
  ledgerPartitionsDropped: string[];
  hourlyRowsDeleted: number;
  dailyRowsDeleted: number;
  alertsDeleted: number;
  requestRecordsDeleted: number;
  /** Steps that failed this time (logged; tried again next time). */
  failed: string[];
}

type RetentionSettings = Pick<StoreSettings, 'MODELGATE_LEDGER_RETENTION' | 'MODELGATE_METRICS_RETENTION' | 'MODELGATE_METRICS_HOURLY_RETENTION'> &
  Partial<Pick<RecordSettings, 'MODELGATE_REQUEST_RETENTION'>>;

const pause = () => new Promise((resolve) => setTimeout(resolve, 5));

export class RetentionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private closed = false;

  constructor(
    private readonly store: Store,
    private readonly settings: RetentionSettings,
    private readonly logger: Logger,
    private readonly intervalMs = HOUR_MS,
  ) {}

  /** First sweep within a few minutes of boot (replicas started together spread out), then every interval. */
  start(firstInMs = 60_000 + Math.random() * 120_000): void {
    this.schedule(firstInMs);
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.running = this.sweep()
        .catch((error: Error) => this.logger.warn({ err: error.message }, 'retention: sweep failed; tried again next time'))
        .finally(() => this.schedule(this.intervalMs));
    }, ms);
    this.timer.unref();
  }

  /** One sweep, if this replica holds (or takes) the lease. A step that fails is logged; the others still run. */
  async sweep(now = Date.now()): Promise<SweepReport> {
    const report: SweepReport = { ran: false, ledgerRowsDeleted: 0, ledgerPartitionsDropped: [], hourlyRowsDeleted: 0, dailyRowsDeleted: 0, alertsDeleted: 0, requestRecordsDeleted: 0, failed: [] };
    // Held for the interval: the other replicas skip their sweeps until it lapses.
    if (!(await takeLease(this.store, LEASE, this.intervalMs, undefined, now))) return report;
    report.ran = true;
    const step = async (name: string, work: () => Promise<void>) => {
      try {
        await work();
      } catch (error) {
        report.failed.push(name);
        this.logger.warn({ err: (error as Error).message, step: name }, 'retention: a sweep step failed; the others ran, it is tried again next time');
      }
    };
    const ledgerCutoff = now - this.settings.MODELGATE_LEDGER_RETENTION * DAY_MS;
    if (this.store.engine === 'postgres') {
      await step('partitions ahead', () => ensurePartitions(this.store.db, monthStart(now, -1), monthStart(now, 2), now));
      await step('ledger', async () => void (report.ledgerPartitionsDropped = await dropPartitionsBefore(this.store.db, this.store.schema, ledgerCutoff)));
    } else {
      await step('ledger', async () => void (report.ledgerRowsDeleted = await this.deleteLedgerRows(ledgerCutoff)));
    }
    const today = now - (now % DAY_MS);
    const dailyCutoff = today - this.settings.MODELGATE_METRICS_RETENTION * DAY_MS;
    await step('daily rollups', async () => void (report.dailyRowsDeleted = await this.deleteBuckets('usage_daily', dailyCutoff)));
    await step('usage_daily_models', async () => void (report.dailyRowsDeleted += await this.deleteBuckets('usage_daily_models', dailyCutoff)));
    const hourlyCutoff = now - (now % HOUR_MS) - this.settings.MODELGATE_METRICS_HOURLY_RETENTION * DAY_MS;
    await step('hourly rollups', async () => void (report.hourlyRowsDeleted = await this.deleteBuckets('usage_hourly', hourlyCutoff)));
    for (const table of ['usage_hourly_models', 'usage_errors_hourly', 'circuit_openings_hourly'] as const) {
      await step(table, async () => void (report.hourlyRowsDeleted += await this.deleteBuckets(table, hourlyCutoff)));
    }
    await step('alerts', async () => {
      const alerts = await this.store.db.deleteFrom('budget_alerts').where('fired_at', '<', now - ALERT_KEEP_MS).executeTakeFirst();
      report.alertsDeleted = Number(alerts.numDeletedRows);
    });
    const recordDays = this.settings.MODELGATE_REQUEST_RETENTION ?? REQUEST_RETENTION_DAYS;
    await step('request records', async () => void (report.requestRecordsDeleted = await this.deleteRequestRecords(now - recordDays * DAY_MS)));
    if (this.store.engine === 'sqlite' && report.ledgerRowsDeleted + report.dailyRowsDeleted + report.hourlyRowsDeleted + report.requestRecordsDeleted > 0) await step('vacuum', () => this.vacuum());
    const removed = report.ledgerRowsDeleted + report.ledgerPartitionsDropped.length + report.dailyRowsDeleted + report.hourlyRowsDeleted + report.alertsDeleted + report.requestRecordsDeleted;
    if (removed > 0) this.logger.info({ ...report }, 'retention: removed what is past its retention');
    return report;
  }

  /** SQLite: ledger rows older than `cutoff`, BATCH at a time. */
  private async deleteLedgerRows(cutoff: number): Promise<number> {
    let total = 0;
    for (;;) {
      const result = await sql`delete from ledger where rowid in (select rowid from ledger where at < ${cutoff} limit ${BATCH})`.execute(this.store.db);
      const deleted = Number(result.numAffectedRows ?? 0);
      total += deleted;
      if (deleted < BATCH || this.closed) return total;
      await pause();
    }
  }

  /** Request records made before `cutoff`, BATCH at a time, a pause between batches. */
  private async deleteRequestRecords(cutoff: number): Promise<number> {
    let total = 0;
    for (;;) {
      const result =
        this.store.engine === 'sqlite'
          ? await sql`delete from request_records where rowid in (select rowid from request_records where created_at < ${cutoff} limit ${BATCH})`.execute(this.store.db)
          : await sql`delete from request_records where id in (select id from request_records where created_at < ${cutoff} order by created_at limit ${BATCH})`.execute(this.store.db);
      const deleted = Number(result.numAffectedRows ?? 0);
      total += deleted;
      if (deleted < BATCH || this.closed) return total;
      await pause();
    }
  }

  /** Rollup rows of buckets before `cutoff`, one bucket per statement, oldest first. */
  private async deleteBuckets(table: RollupTableName | ModelRollupTableName | 'usage_errors_hourly' | 'circuit_openings_hourly', cutoff: number): Promise<number> {
    let total = 0;
    for (;;) {
      const oldest = await this.store.db.selectFrom(table).select((eb) => eb.fn.min<number>('bucket').as('bucket')).where('bucket', '<', cutoff).executeTakeFirst();
      if (oldest?.bucket === null || oldest?.bucket === undefined || this.closed) return total;
      const result = await this.store.db.deleteFrom(table).where('bucket', '=', Number(oldest.bucket)).executeTakeFirst();
      total += Number(result.numDeletedRows);
      await pause();
    }
  }

  /** SQLite: gives freed pages back to the file system, VACUUM_PAGES at a time. */
  private async vacuum(): Promise<void> {
    const database = this.store.sqlite!;
    // 2 = INCREMENTAL. A file made before that was set (by hand, or restored) keeps its free pages for reuse.
    if (Number(database.pragma('auto_vacuum', { simple: true })) !== 2) return;
    let free = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 100_000 && !this.closed; i++) {
      const left = Number(database.pragma('freelist_count', { simple: true }));
      // Done, or nothing more comes back.
      if (left === 0 || left >= free) return;
      free = left;
      // Through the driver's pragma(), which steps the statement to its end (a plain run() frees one page).
      database.pragma(`incremental_vacuum(${VACUUM_PAGES})`);
      await pause();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.running;
    await releaseLease(this.store, LEASE).catch(() => undefined);
  }
}
