// The record of every request that entered an experiment, written off the request path: the
// response has ended when a row is queued, and rows go to the database in batches about once a
// second. A bounded queue: while the database does not take them, at most MAX_BACKLOG rows wait
// (older ones are kept, newer ones dropped and counted in a warning), so an outage cannot grow
// memory. Feedback finds a request here: first among the rows not yet written, then in the table.
import { randomBytes } from 'node:crypto';
import type { Insertable, Selectable } from 'kysely';
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

  add(row: ExposureRow): void {
    if (this.closed) return;
    if (this.queue.length >= MAX_BACKLOG) {
      if (this.dropped++ === 0) this.logger.warn({ backlog: this.queue.length }, 'experiments: the database is not taking exposures; new ones are dropped until it does');
      return;
    }
    this.queue.push(row);
    this.timer ??= setTimeout(() => void this.tick(), this.flushMs);
  }

  /** Writes every queued row (a flush under way is waited for first). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.queue.length === 0) return;
    this.flushing = this.write().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  /** The newest exposure of `requestId` made by `keyId`: queued or written; undefined when none. */
  async find(requestId: string, keyId: string): Promise<Exposure | undefined> {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const row = this.queue[i]!;
      if (row.request_id === requestId && row.key_id === keyId) return row as Exposure;
    }
    // Another key's requests under the same id (a client may choose its ids) are never looked at.
    return this.store.db
      .selectFrom('experiment_exposures')
      .selectAll()
      .where('request_id', '=', requestId)
      .where('key_id', '=', keyId)
      .orderBy('at', 'desc')
      .limit(1)
      .executeTakeFirst();
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

  private async write(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, BATCH_ROWS);
      await this.store.db.insertInto('experiment_exposures').values(batch).execute();
      this.queue.splice(0, batch.length);
    }
    if (this.dropped > 0) {
      this.logger.warn({ dropped: this.dropped }, 'experiments: exposures were dropped while the database did not take them');
      this.dropped = 0;
    }
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    try {
      await this.flush();
    } catch (error) {
      this.logger.warn({ err: (error as Error).message, backlog: this.queue.length }, 'experiments: writing exposures failed; retrying');
      if (!this.closed) this.timer ??= setTimeout(() => void this.tick(), this.flushMs * 5);
    }
  }
}
