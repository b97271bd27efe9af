// Key changes, told to every replica through Redis pub/sub on `<REDIS_KEY_PREFIX>keys:changed`: a
// message names the key id and its new version, and a sequence number from one Redis counter, so a
// replica that sees a number skipped (a message lost) forgets everything it cached. A subscriber
// that loses its connection forgets everything too, and until it is subscribed again the cache
// trusts its entries for FALLBACK_TTL_MS only (verified-keys.ts). Publishing never fails a change:
// the database holds the truth, and the other replicas' entries expire within a minute at worst.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

export interface KeyChange {
  id: string;
  version: number;
}

export class KeyInvalidation {
  private readonly subscriber: Redis;
  private readonly channel: string;
  private listening = false;
  private lastSeq: number | undefined;
  private closed = false;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly logger: Logger,
    private readonly onChange: (change: KeyChange) => void,
    private readonly onLost: () => void,
  ) {
    this.channel = `${prefix}keys:changed`;
    // A connection of its own: one in subscriber mode can send nothing else.
    this.subscriber = redis.duplicate({ enableOfflineQueue: false });
    this.subscriber.on('error', () => this.lose());
    this.subscriber.on('close', () => this.lose());
    this.subscriber.on('ready', () => void this.listen());
    this.subscriber.on('message', (channel: string, text: string) => {
      if (channel === this.channel) this.receive(text);
    });
  }

  /** Whether changes made elsewhere reach this replica now. */
  get subscribed(): boolean {
    return this.listening;
  }

  /** Tells every replica (this one learns it from its own call, not from here). */
  async publish(change: KeyChange): Promise<void> {
    try {
      // The counter is a key: ioredis puts REDIS_KEY_PREFIX before it; channels get no prefix, so ours carries it.
      const seq = await this.redis.incr('keys:seq');
      await this.redis.publish(this.channel, JSON.stringify({ ...change, seq }));
    } catch (error) {
      this.logger.warn({ err: (error as Error).message, keyId: change.id }, 'keys: a key change could not be told to the other replicas through Redis; their caches drop it within a minute');
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.subscriber.disconnect();
  }

  private async listen(): Promise<void> {
    try {
      await this.subscriber.subscribe(this.channel);
      // Whatever changed while not listening is unknown: start afresh.
      this.lastSeq = undefined;
      this.onLost();
      this.listening = true;
    } catch (error) {
      if (!this.closed) this.logger.warn({ err: (error as Error).message }, 'keys: cannot subscribe to key changes; cached keys are trusted for a second only');
    }
  }

  private lose(): void {
    if (!this.listening) return;
    this.listening = false;
    this.onLost();
  }

  private receive(text: string): void {
    let message: KeyChange & { seq: number };
    try {
      message = JSON.parse(text) as KeyChange & { seq: number };
    } catch {
      return;
    }
    if (typeof message.id !== 'string' || typeof message.version !== 'number' || typeof message.seq !== 'number') return;
    const skipped = this.lastSeq !== undefined && message.seq > this.lastSeq + 1;
    this.lastSeq = this.lastSeq === undefined ? message.seq : Math.max(this.lastSeq, message.seq);
    if (skipped) this.onLost();
    else this.onChange({ id: message.id, version: message.version });
  }
}
