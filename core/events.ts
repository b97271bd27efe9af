// Internal events between plugins, delivered synchronously in-process: a plugin emits, others (and
// later the webhook/e-mail/chat notifiers) listen. Payloads are plain JSON so they can be sent on
// as they are.
import { EventEmitter } from 'node:events';

export interface AlertEvent {
  /** e.g. `budget.threshold` */
  kind: string;
  /** email | chat | webhook | pause */
  action: string;
  at: string;
  [key: string]: unknown;
}

/** Spend moved in a budget period (emitted by the cost guard after settling). */
export interface BudgetEvent {
  period: 'day' | 'week' | 'month';
  spentUsd: number;
  limitUsd: number;
  /** spentUsd / limitUsd (0 when the limit is 0 and nothing was spent). */
  usedRatio: number;
}

/** A Redis-backed part answered from local state (or refused) because Redis failed. */
export interface FallbackEvent {
  /** e.g. `rate-limit`, `cost-guard` */
  component: string;
  reason: string;
}

/**
 * Something for the outside world (plugins/events.ts delivers it by webhook and, for alerts, e-mail
 * and chat): a type of the event catalogue and its data. Emitted once per occurrence across
 * replicas — whoever emits has deduplicated it already (the shared store says who was first).
 */
export interface Notification {
  type: string;
  data: Record<string, unknown>;
  /** When it happened; now when absent. */
  at?: Date;
}

/** One delivery attempt of an event ended (plugins/events/dispatcher.ts), for the metrics. */
export interface DeliveryEvent {
  /** webhook | email | chat | alert_webhook */
  channel: string;
  outcome: 'delivered' | 'retried' | 'failed' | 'skipped';
}

export interface GatewayEvents {
  alert: [AlertEvent];
  notify: [Notification];
  delivery: [DeliveryEvent];
  budget: [BudgetEvent];
  fallback: [FallbackEvent];
}

export class EventBus extends EventEmitter<GatewayEvents> {}
