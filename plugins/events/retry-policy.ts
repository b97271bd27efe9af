// When a failed delivery is tried again. Webhook endpoints get MODELGATE_WEBHOOK_RETRIES retries,
// backing off exponentially from MODELGATE_WEBHOOK_RETRY_DELAY (a receiver's Retry-After, when
// longer, wins); then the delivery is failed and an admin may replay it. Alerts are not given up
// so soon: a mail server or chat service down for minutes must lose no alert, so alert channels
// retry on the same backoff, capped at five minutes, for a day.
import type { DeliveryError } from './types.js';
import type { Delivery, FailedOutcome } from './outbox.js';

export interface RetryPolicy {
  retries: number;
  delayMs: number;
}

const WEBHOOK_MAX_BACKOFF_MS = 3_600_000;
const ALERT_MAX_BACKOFF_MS = 300_000;
export const ALERT_RETRY_HORIZON_MS = 86_400_000;
const MIN_DELAY_MS = 100;

export function afterFailure(delivery: Delivery, error: DeliveryError, policy: RetryPolicy, now = Date.now()): FailedOutcome {
  if (error.gone) return { giveUp: true };
  const made = delivery.attempts + 1;
  const alert = delivery.channel !== 'webhook';
  // From at least MIN_DELAY_MS: a delay of 0 would have an alert retried at every poll for a day.
  const backoff = Math.min(alert ? ALERT_MAX_BACKOFF_MS : WEBHOOK_MAX_BACKOFF_MS, Math.max(policy.delayMs, MIN_DELAY_MS) * 2 ** Math.min(made - 1, 30));
  const wait = Math.max(backoff, error.retryAfterMs ?? 0);
  if (alert) return now + wait > delivery.created_at + ALERT_RETRY_HORIZON_MS ? { giveUp: true } : { retryAt: now + wait };
  return made > policy.retries ? { giveUp: true } : { retryAt: now + wait };
}
