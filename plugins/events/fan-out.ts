// From a notification to deliveries: one per webhook endpoint that takes its type and, for an
// alert, one per alert channel it goes to. A budget threshold goes to the channel its rule names
// (`0.8:chat`); every other alert goes to every alert channel that is on. Deliveries are queued in
// memory and written to the outbox in batches, off the request path; a database that does not
// answer keeps them queued (bounded) until it does. The alert's "said once" marker is written before
// (by whoever deduplicated it): what is queued here when the process dies is lost, so the queue is
// written within milliseconds and, at a stop, tried for a few seconds before it is given up loudly.
import type { Logger } from 'pino';
import type { Notification } from '../../core/events.js';
import type { Anonymizer } from '../../core/anonymize.js';
import { eventMessage, isAlert, isEventType, type EventType } from './catalogue.js';
import type { Endpoints } from './endpoints.js';
import { newId, type NewDelivery, type Outbox } from './outbox.js';
import type { Channel } from './types.js';

export type AlertChannel = Exclude<Channel, 'webhook'>;

const RULE_CHANNEL: Record<string, AlertChannel | undefined> = { email: 'email', chat: 'chat', webhook: 'alert_webhook' };
/** Deliveries held while the database does not answer; past it the oldest are dropped, loudly. */
export const MAX_QUEUED = 10_000;
const CLOSE_ATTEMPTS = 3;
/** Deliveries of a burst are written together; an event waits this long in memory at most (the database answering). */
const FLUSH_MS = 20;

export interface FanOutOptions {
  outbox: Outbox;
  endpoints: Endpoints;
  webhooks: boolean;
  alertChannels: ReadonlySet<AlertChannel>;
  anonymizer: Anonymizer;
  logger: Logger;
  /** Deliveries reached the outbox: the dispatcher may look. */
  written(): void;
}

export function alertChannelsOf(notification: Notification, enabled: ReadonlySet<AlertChannel>): AlertChannel[] {
  if (!isEventType(notification.type) || !isAlert(notification.type)) return [];
  if (notification.type.startsWith('budget.threshold_')) {
    const channel = RULE_CHANNEL[String(notification.data.action)];
    return channel && enabled.has(channel) ? [channel] : [];
  }
  return [...enabled];
}

export class FanOut {
  private queue: NewDelivery[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  dropped = 0;

  constructor(private readonly options: FanOutOptions) {}

  accept(notification: Notification): void {
    const { endpoints, logger } = this.options;
    let payload: string;
    try {
      if (!isEventType(notification.type)) throw new Error(`unknown event type ${notification.type}`);
      // Whatever a user wrote (a key's name, an error message) is anonymized as the logs are.
      const data = this.options.anonymizer.value(notification.data) as Parameters<typeof eventMessage<EventType>>[1];
      payload = JSON.stringify(eventMessage(notification.type, data, notification.at));
    } catch (error) {
      logger.error({ err: (error as Error).message, type: notification.type }, 'events: an event could not be built; not sent');
      return;
    }
    const eventId = newId('msg');
    const createdAt = Date.now();
    const base = { eventId, eventType: notification.type, payload, createdAt };
    const deliveries: NewDelivery[] = [];
    if (this.options.webhooks) for (const endpoint of endpoints.takers(notification.type)) deliveries.push({ ...base, channel: 'webhook', endpointId: endpoint.id });
    for (const channel of alertChannelsOf(notification, this.options.alertChannels)) deliveries.push({ ...base, channel, endpointId: null });
    if (deliveries.length === 0) return;
    this.queue.push(...deliveries);
    if (this.queue.length > MAX_QUEUED) {
      const over = this.queue.length - MAX_QUEUED;
      this.queue.splice(0, over);
      this.dropped += over;
      logger.error({ dropped: over }, 'events: the database has not taken deliveries for a while; the oldest queued were dropped');
    }
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS).unref();
  }

  /** Writes what is queued; on failure keeps it for the next try. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flushing ??= this.write().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async write(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, 200);
      try {
        await this.options.outbox.add(batch);
      } catch (error) {
        this.queue.unshift(...batch);
        this.options.logger.warn({ err: (error as Error).message, queued: this.queue.length }, 'events: cannot write deliveries to the outbox; tried again shortly');
        this.timer ??= setTimeout(() => void this.flush(), 1000).unref();
        return;
      }
      this.options.written();
    }
  }

  /** At a stop: writes what is queued, trying for a few seconds; what still cannot be written is lost, and said. */
  async close(): Promise<void> {
    // A write under way holds its batch outside the queue: it is waited for (and, failed, put back).
    await this.flushing;
    for (let attempt = 0; attempt < CLOSE_ATTEMPTS && this.queue.length > 0; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 1000));
      await this.flush();
    }
    clearTimeout(this.timer);
    if (this.queue.length > 0) {
      this.options.logger.error({ lost: this.queue.length, types: [...new Set(this.queue.map((d) => d.eventType))] }, 'events: deliveries lost at shutdown: the database did not take them');
      this.queue = [];
    }
  }

  get queued(): number {
    return this.queue.length;
  }
}
