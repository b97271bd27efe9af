// What every part of event delivery shares: the message as sent ({type, timestamp, data}), the
// destinations a message goes to, and how a failed delivery says whether and when to try again.

/** The JSON body of every webhook and the input of every alert channel. */
export interface EventMessage {
  /** A name from the catalogue (catalogue.ts), e.g. `budget.threshold_reached`. */
  type: string;
  /** ISO 8601 instant the event happened. */
  timestamp: string;
  data: Record<string, unknown>;
}

/** An event in words, for people (alert-text.ts): e-mail and chat render it. */
export interface EventDescription {
  title: string;
  summary: string;
  facts: Array<[label: string, value: string]>;
  next: string;
}

/** Where one delivery goes: a registered webhook endpoint, or one of the three alert channels. */
export type Channel = 'webhook' | 'email' | 'chat' | 'alert_webhook';

/** What one delivery attempt saw, for the delivery log. */
export interface AttemptResult {
  /** The receiver's HTTP status (SMTP: 250 on success), null when none arrived. */
  statusCode: number | null;
  latencyMs: number;
}

/**
 * A delivery that failed. `retryAfterMs`: the receiver asked for a wait (Retry-After); `gone`: the
 * receiver said the endpoint is gone (410), so it is disabled. The message never holds a secret
 * (no URL, no header value, no password).
 */
export class DeliveryError extends Error {
  readonly statusCode: number | null;
  readonly latencyMs: number;
  readonly retryAfterMs: number | undefined;
  readonly gone: boolean;

  constructor(message: string, options: { statusCode?: number | null; latencyMs?: number; retryAfterMs?: number; gone?: boolean } = {}) {
    super(message);
    this.name = 'DeliveryError';
    this.statusCode = options.statusCode ?? null;
    this.latencyMs = options.latencyMs ?? 0;
    this.retryAfterMs = options.retryAfterMs;
    this.gone = options.gone ?? false;
  }
}
