// The record of every request that entered an experiment, written off the request path: the
// response has ended when a row is queued, and rows go to the database in batches about once a
// second. A bounded queue: while the database does not take them, at most MAX_BACKLOG rows wait
// (older ones are kept, newer ones dropped and counted in a warning), so an outage cannot grow
// memory. Feedback finds a request here: first among the rows not yet written, then in the table.
import { randomBytes } from 'node:crypto';
import { sql, type Insertable, type Selectable } from 'kysely';
import type { Logger } from 'pino';
import type { Store } from '../../core/store/database.js';
import type { ExperimentExposureTable } from '../../core/store/schema.js';

export type ExposureRow = Insertable<ExperimentExposureTable>;
export type Exposure = Selectable<ExperimentExposureTable>;

const BATCH_ROWS = 500;
export const MAX_BACKLOG = 20_000;

export function newExposureId(): string {
  return `xp_${randomBytes(12).toString('hex')}`;
}

export class ExposureWriter {
  private queue: ExposureRow[] = [];
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private dropped = 0;
  private closed = false;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly flushMs: number,
  ) {}

  /** Rows queued and not yet written. */
  get backlog(): number {
    return this.queue.length;
  }

  add(row: ExposureRow): void {
    if (this.closed) return;
    if (this.queue.length >= MAX_BACKLOG) {
      if (this.dropped++ === 0) this.logger.warn({ backlog: this.queue.length }, 'experiments: the database is not taking exposures; new ones are dropped until it does');
      return;
    }
    this.queue.push(row);
    this.timer ??= setTimeout(() => void this.tick(), this.flushMs).unref();
  }

  /** Writes every queued row (a flush under way is waited for first). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.queue.length === 0) return;
    this.flushing = this.write().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  /** The newest exposure of `requestId` made by `keyId`, written or still queued (`queued`); undefined when none. */
  async find(requestId: string, keyId: string): Promise<{ exposure: Exposure; queued: boolean } | undefined> {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const row = this.queue[i]!;
      if (row.request_id === requestId && row.key_id === keyId) return { exposure: row as Exposure, queued: true };
    }
    // Another key's requests under the same id (a client may choose its ids) are never looked at.
    const written = await this.store.db
      .selectFrom('experiment_exposures')
      .selectAll()
      .where('request_id', '=', requestId)
      .where('key_id', '=', keyId)
      .orderBy('at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return written && { exposure: written, queued: false };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    try {
      await this.flush();
    } catch (error) {
      this.logger.error({ err: (error as Error).message, rows: this.queue.length }, 'experiments: exposures could not be written at shutdown');
    }
  }

  /**
   * Writes the queue in batches. A batch the database refuses is written row by row, and a row it
   * still refuses is dropped with a warning: one bad row must not hold every later one back. A row
   * already written (by feedback that could not wait: writeNow) is skipped.
   */
  private async write(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, BATCH_ROWS);
      try {
        await this.insert(batch);
      } catch (error) {
        await this.oneByOne(batch, error as Error);
      }
      this.queue.splice(0, batch.length);
    }
    if (this.dropped > 0) {
      this.logger.warn({ dropped: this.dropped }, 'experiments: exposures were dropped while the database did not take them');
      this.dropped = 0;
    }
  }

  /**
   * Each row of a refused batch alone; the rows still refused are dropped — unless none went in and
   * the database does not answer a trivial query either: then it is the database, and the batch
   * stays queued (thrown).
   */
  private async oneByOne(batch: readonly ExposureRow[], batchError: Error): Promise<void> {
    const refused: Array<[ExposureRow, Error]> = [];
    for (const row of batch) await this.insert([row]).catch((error: Error) => refused.push([row, error]));
    if (refused.length === batch.length && !(await sql`select 1`.execute(this.store.db).then(() => true, () => false))) throw batchError;
    for (const [row, error] of refused) {
      this.logger.warn({ experimentId: row.experiment_id, err: error.message }, 'experiments: an exposure the database refused was dropped');
    }
  }

  /** Writes one queued row at once (feedback for a request answered a moment ago). */
  async writeNow(row: ExposureRow): Promise<void> {
    await this.insert([row]);
  }

  private async insert(rows: readonly ExposureRow[]): Promise<void> {
    await this.store.db.insertInto('experiment_exposures').values([...rows]).onConflict((oc) => oc.column('id').doNothing()).execute();
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    try {
      await this.flush();
    } catch (error) {
      this.logger.warn({ err: (error as Error).message, backlog: this.queue.length }, 'experiments: writing exposures failed; retrying');
      if (!this.closed) this.timer ??= setTimeout(() => void this.tick(), this.flushMs * 5).unref();
    }
  }
}
