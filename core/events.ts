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

export interface GatewayEvents {
  alert: [AlertEvent];
}

export class EventBus extends EventEmitter<GatewayEvents> {}
