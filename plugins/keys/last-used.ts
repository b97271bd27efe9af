// Last-used times, off the request path: a request notes its key in memory; every FLUSH_MS the keys
// not written for a minute are written in one transaction (key-rows.ts `touch` skips a row another
// replica wrote less than a minute ago). Bounded: at most MAX_PENDING keys wait for a write.
import type { Logger } from 'pino';
import type { KeyRows } from './key-rows.js';

const FLUSH_MS = 10_000;
const EVERY_MS = 60_000;
const MAX_PENDING = 10_000;

export class LastUsedWriter {
  private pending = new Map<string, number>();
  /** When each key's time was last written by this replica (bounded like pending). */
  private written = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly rows: KeyRows,
    private readonly logger: Logger,
  ) {
    this.timer = setInterval(() => void this.flush(), FLUSH_MS).unref();
  }

  used(keyId: string, now = Date.now()): void {
    if (now - (this.written.get(keyId) ?? 0) < EVERY_MS || this.pending.has(keyId)) return;
    if (this.pending.size >= MAX_PENDING) return;
    this.pending.set(keyId, now);
  }

  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.rows.touch(batch);
      for (const [id, at] of batch) this.written.set(id, at);
      if (this.written.size > MAX_PENDING) {
        const cutoff = Date.now() - EVERY_MS;
        for (const [id, at] of this.written) if (at < cutoff) this.written.delete(id);
      }
    } catch (error) {
      this.logger.warn({ err: (error as Error).message, keys: batch.size }, 'keys: last-used times could not be written; they are dropped');
    }
  }
}
