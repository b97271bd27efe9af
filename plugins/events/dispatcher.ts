// The delivery loop of one replica: claims due deliveries from the outbox, hands each to its
// channel's sender, and records the outcome — delivered, retried later (retry-policy.ts) or given
// up. An endpoint answering 410 is disabled and its pending deliveries skipped. It runs beside the
// request path, never in it: a slow receiver holds a delivery slot, not a request.
import type { Logger } from 'pino';
import { HOLDER } from '../../core/store/lease.js';
import type { Outbox, Delivery } from './outbox.js';
import { afterFailure, type RetryPolicy } from './retry-policy.js';
import { DeliveryError, type AttemptResult, type Channel, type EventMessage } from './types.js';

/** Sends one delivery; throws a DeliveryError when the receiver did not take it. */
export type Sender = (message: EventMessage, delivery: Delivery) => Promise<AttemptResult>;

export interface DispatcherOptions {
  outbox: Outbox;
  senders: Partial<Record<Channel, Sender>>;
  policy: RetryPolicy;
  logger: Logger;
  /** The longest one attempt may take (MODELGATE_WEBHOOK_TIMEOUT): claims outlast it. */
  timeoutMs: number;
  /** An endpoint said it is gone (410): disable it. */
  gone(endpointId: string): Promise<void>;
  /** How each attempt ended (the metrics count them). */
  ended?(channel: string, outcome: 'delivered' | 'retried' | 'failed' | 'skipped'): void;
  pollMs?: number;
  batch?: number;
  holder?: string;
}

const CONCURRENCY = 8;
/** A chat service takes about one message a second per URL: chat deliveries go one at a time. */
const CHAT_INTERVAL_MS = 1000;

export class Dispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;
  private again = false;
  private readonly holder: string;
  private readonly pollMs: number;
  private readonly batch: number;
  /** Deliveries made by this replica, by outcome: for the metrics and the tests. */
  readonly counts = { delivered: 0, retried: 0, failed: 0, skipped: 0 };

  private count(delivery: Delivery, outcome: keyof Dispatcher['counts']): void {
    this.counts[outcome]++;
    this.options.ended?.(delivery.channel, outcome);
  }

  constructor(private readonly options: DispatcherOptions) {
    this.holder = options.holder ?? HOLDER;
    this.pollMs = options.pollMs ?? 1000;
    this.batch = options.batch ?? 16;
  }

  start(): void {
    this.schedule(0);
  }

  /** Something was just queued: look now rather than at the next poll. */
  wake(): void {
    if (this.closed) return;
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  /** Stops claiming; waits for the deliveries in hand (each bounded by the timeout). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.running = this.tick().finally(() => {
        this.running = undefined;
        const more = this.again;
        this.again = false;
        this.schedule(more ? 0 : this.pollMs);
      });
    }, ms);
    this.timer.unref();
  }

  /** One claim and its deliveries; claims again at once while full batches come back. */
  private async tick(): Promise<void> {
    for (;;) {
      let claimed: Delivery[];
      try {
        // The claim holds the batch until each delivery's turn, when it is renewed for that attempt: the
        // longest wait is a batch of chat messages made one after another.
        const leaseMs = this.batch * (this.options.timeoutMs + CHAT_INTERVAL_MS) + 5000;
        claimed = await this.options.outbox.claim(this.holder, this.batch, leaseMs);
      } catch (error) {
        this.options.logger.warn({ err: (error as Error).message }, 'events: cannot claim deliveries; tried again at the next poll');
        return;
      }
      if (claimed.length === 0) return;
      // Chat deliveries wait their turn for the URL: one worker makes them, in order, the others the rest.
      const chat = claimed.filter((delivery) => delivery.channel === 'chat');
      const rest = claimed.filter((delivery) => delivery.channel !== 'chat');
      const work = (queue: Delivery[]) => async () => {
        // Checked before a delivery is taken: one taken after a stop would be neither made nor given back.
        while (!this.closed && queue.length > 0) await this.deliver(queue.shift()!);
      };
      await Promise.all([work(chat)(), ...Array.from({ length: Math.min(CONCURRENCY, rest.length) }, work(rest))]);
      // Stopping: the claims not started are given back, for another replica (or the next start) at once.
      const unstarted = [...chat, ...rest].map((delivery) => delivery.id);
      if (unstarted.length > 0) await this.options.outbox.release(unstarted, this.holder).catch(() => undefined);
      if (claimed.length < this.batch || this.closed) return;
    }
  }

  private async deliver(delivery: Delivery): Promise<void> {
    const { outbox, logger } = this.options;
    const sender = this.options.senders[delivery.channel as Channel];
    const context = { delivery: delivery.id, event: delivery.event_id, type: delivery.event_type, channel: delivery.channel, endpoint: delivery.endpoint_id ?? undefined };
    try {
      if (!sender) {
        await outbox.skip(delivery, this.holder, `the ${delivery.channel} channel is not enabled`);
        this.count(delivery, 'skipped');
        return;
      }
      // The claim is renewed for this one attempt (its timeouts, a chat turn): a claim that lapsed
      // while earlier deliveries of the batch took long may be another replica's now.
      const attemptMs = this.options.timeoutMs * 3 + CHAT_INTERVAL_MS + 5000;
      if (!(await outbox.renew(delivery, this.holder, attemptMs))) return;
      const started = performance.now();
      let result: AttemptResult;
      try {
        result = await sender(JSON.parse(delivery.payload) as EventMessage, delivery);
      } catch (thrown) {
        if (thrown instanceof SkipDelivery) {
          await outbox.skip(delivery, this.holder, thrown.message);
          this.count(delivery, 'skipped');
          return;
        }
        const error = thrown instanceof DeliveryError ? thrown : new DeliveryError(`delivery failed: ${(thrown as Error).name}`, { latencyMs: performance.now() - started });
        const outcome = afterFailure(delivery, error, this.options.policy);
        await outbox.failed(delivery, this.holder, { statusCode: error.statusCode, latencyMs: error.latencyMs }, error.message, outcome);
        if (error.gone && delivery.channel === 'webhook' && delivery.endpoint_id) {
          await this.options.gone(delivery.endpoint_id);
          await outbox.skipPending(delivery.endpoint_id, 'endpoint disabled: the receiver answered 410 Gone');
          logger.warn(context, 'events: webhook endpoint answered 410 Gone; disabled');
        }
        if ('giveUp' in outcome) {
          this.count(delivery, 'failed');
          logger.error({ ...context, attempts: delivery.attempts + 1, status: error.statusCode, err: error.message }, 'events: delivery failed; given up (an admin may replay it)');
        } else {
          this.count(delivery, 'retried');
          logger.warn({ ...context, attempts: delivery.attempts + 1, status: error.statusCode, err: error.message, retryAt: new Date(outcome.retryAt).toISOString() }, 'events: delivery failed; retried later');
        }
        return;
      }
      await outbox.delivered(delivery, this.holder, result);
      this.count(delivery, 'delivered');
    } catch (error) {
      // The outcome could not be written: the claim lapses and the delivery is made again (at least once).
      logger.warn({ ...context, err: (error as Error).message }, 'events: cannot record a delivery; it is made again when its claim lapses');
    }
  }
}

/** Thrown by a sender for a delivery that must not be attempted (its endpoint was deleted or disabled). */
export class SkipDelivery extends Error {}
