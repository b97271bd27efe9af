// The request-record writer, shaped like the ledger's (plugins/cost/ledger.ts): a finished request's
// capture is queued in memory and the request goes on; every second the queue is turned into rows
// (anonymized, clipped, encrypted: capture.ts) and written in batches, one multi-row INSERT per
// batch, the event loop let go between batches. The backlog is bounded in records and in bytes:
// past it new records are dropped and counted, with a warning — records are not money, so a
// database that is away costs records, never memory or requests. A batch that fails is kept (its
// rows built once) and retried with backoff; after MAX_ATTEMPTS its rows are tried one by one and
// those that still fail are dropped, counted.
import type { Logger } from 'pino';
import type { Store } from '../store/database.js';
import type { RequestRecordTable } from '../store/schema.js';
import { toRow, type Capture, type RowOptions } from './capture.js';

const BATCH = 100;
/** A batch also ends past this many bytes of captured bodies: one SQLite insert holds the event loop while it runs. */
const BATCH_BYTES = 4 * 1024 * 1024;
/** Bytes of captured bodies that may wait; past it new records are dropped and counted. */
const MAX_BACKLOG_BYTES = 64 * 1024 * 1024;
const MAX_BACKOFF_MS = 30_000;
const MAX_ATTEMPTS = 5;

export interface WriterOptions extends RowOptions {
  flushMs: number;
  /** MODELGATE_REQUEST_RECORDS_BACKLOG. */
  maxBacklog: number;
}

export class RecordWriter {
  private queue: Capture[] = [];
  private queuedBytes = 0;
  /** Rows built and not yet written (a failed batch waits here). */
  private pending: RequestRecordTable[] = [];
  private attempts = 0;
  private failures = 0;
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Dropped since the last warning. */
  private droppedSinceWarning = 0;
  /** Records dropped since start (full backlog, a batch given up on, added after close). */
  dropped = 0;
  /** Records written since start. */
  written = 0;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly options: WriterOptions,
  ) {
    this.schedule(options.flushMs);
  }

  /** Records waiting to be written. */
  get backlog(): number {
    return this.queue.length + this.pending.length;
  }

  add(capture: Capture): void {
    if (this.closed || this.backlog >= this.options.maxBacklog || this.queuedBytes + capture.bytes > MAX_BACKLOG_BYTES) {
      this.dropped++;
      this.droppedSinceWarning++;
      return;
    }
    this.queue.push(capture);
    this.queuedBytes += capture.bytes;
  }

  /** Writes every record queued when it is called (a flush under way is waited for first). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.backlog === 0) return;
    this.flushing = this.writeAll().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async writeAll(): Promise<void> {
    // Only what is queued now: records arriving meanwhile wait for the next flush, so a flush ends.
    let left = this.backlog;
    let batches = 0;
    while (left > 0 && this.backlog > 0) {
      if (batches++ > 0) await new Promise((resolve) => setImmediate(resolve));
      if (this.pending.length === 0) await this.build();
      const rows = this.pending;
      left -= Math.max(1, rows.length);
      if (rows.length === 0) continue;
      try {
        await this.insert(rows);
        this.written += rows.length;
      } catch (error) {
        if (++this.attempts < MAX_ATTEMPTS) throw error;
        await this.rowByRow(rows, error as Error);
      }
      this.pending = [];
      this.attempts = 0;
    }
  }

  private async insert(rows: RequestRecordTable[]): Promise<void> {
    await this.store.db
      .insertInto('request_records')
      .values(rows)
      // A retry of a batch that did commit writes nothing twice.
      .onConflict((conflict) => conflict.column('id').doNothing())
      .execute();
  }

  /** A batch that keeps failing: each row alone once; the rows that still fail are dropped, counted. */
  private async rowByRow(rows: RequestRecordTable[], cause: Error): Promise<void> {
    let failed = 0;
    for (const row of rows) {
      try {
        await this.insert([row]);
        this.written++;
      } catch {
        failed++;
      }
    }
    if (failed === 0) return;
    this.dropped += failed;
    this.logger.warn({ err: cause.message, records: failed }, 'request records: records that could not be written were dropped');
  }

  /** Turns the head of the queue into rows; a capture that cannot be built (never expected) is dropped, logged. */
  private async build(): Promise<void> {
    let taken = 0;
    let bytes = 0;
    while (taken < this.queue.length && taken < BATCH && (taken === 0 || bytes + this.queue[taken]!.bytes <= BATCH_BYTES)) bytes += this.queue[taken++]!.bytes;
    const batch = this.queue.splice(0, taken);
    // Anonymizing lets other work run every millisecond or so (toRow), however large a body.
    const clock = { since: performance.now() };
    for (const capture of batch) {
      this.queuedBytes -= capture.bytes;
      try {
        this.pending.push(await toRow(capture, this.options, clock));
      } catch (error) {
        this.dropped++;
        this.logger.error({ err: (error as Error).message, recordId: capture.id }, 'request records: a record could not be built and was dropped');
      }
    }
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    try {
      await this.flush();
      this.failures = 0;
    } catch (error) {
      this.failures++;
      if (this.failures === 1 || this.failures % 10 === 0) {
        this.logger.warn({ err: (error as Error).message, backlog: this.backlog, failures: this.failures }, 'request records: writing a batch failed; kept and retried');
      }
    }
    if (this.droppedSinceWarning > 0) {
      this.logger.warn({ records: this.droppedSinceWarning, dropped: this.dropped, backlog: this.backlog }, 'request records: records were dropped (backlog full or not writable)');
      this.droppedSinceWarning = 0;
    }
    this.schedule(this.failures === 0 ? this.options.flushMs : Math.min(MAX_BACKOFF_MS, this.options.flushMs * 2 ** Math.min(this.failures, 10)));
  }

  /** Stops the timer and writes what is queued; what cannot be written is counted in the log. */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.closed = true;
    try {
      await this.flush();
    } catch (error) {
      this.logger.warn({ err: (error as Error).message, records: this.backlog }, 'request records: records never written');
    }
  }
}
