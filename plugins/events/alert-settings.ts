// GET /v1/admin/alerts (admin keys only): the alerts as this gateway runs them, for the dashboard —
// whether they are on, the cool-down, every rule with its numbers, each alert channel and where it
// sends, and the latest alert events the outbox holds. Where a channel sends is shown as a host or a
// count of recipients: a webhook URL may carry a token in its path or query, and SMTP credentials,
// extra headers and addresses are never answered. The settings remain the way to change any of it.
import { sendJson } from '../../core/respond.js';
import { storeGuarded } from '../../core/store-guard.js';
import type { Route } from '../../core/pipeline.js';
import { adminOnly, NO_STORE } from '../../core/admin-api.js';
import { EXPIRING_WINDOW_DAYS } from '../../core/key-stats.js';
import { parseRules } from '../cost/alerts.js';
import { EVENT_TYPES, isAlert } from './catalogue.js';
import { DOWN_MIN_CALLS, DOWN_WINDOW_SECONDS, ERROR_WINDOW_SECONDS } from './traffic-alerts.js';
import type { Outbox } from './outbox.js';
import type { Channel } from './types.js';

/** Alert events answered in `recent`, newest first. */
export const RECENT_ALERTS = 50;
/** The event types that are alerts: what goes to the alert channels. */
const ALERT_TYPES = EVENT_TYPES.filter(isAlert);

export interface AlertSettingsInput {
  /** MODELGATE_ALERTS_ENABLED. */
  enabled: boolean;
  /** MODELGATE_ALERT_COOLDOWN. */
  cooldownSeconds: number;
  /** MODELGATE_ALERT_RULES, as written. */
  budgetRules: readonly string[];
  /** MODELGATE_ALERT_ERROR_RATE (0: not watched) and _MIN_REQUESTS. */
  errorRate: number;
  errorRateMinRequests: number;
  /** MODELGATE_CIRCUIT_BREAKER_ENABLED and _TIMEOUT (ms). */
  circuitBreaker: boolean;
  circuitRecoveryMs: number;
  email: { enabled: boolean; recipients: number };
  chat: { enabled: boolean; url: string | undefined };
  webhook: { enabled: boolean; url: string | undefined };
}

/** Where a URL sends, and nothing more: its host (and port). Its user, path and query may hold a token. */
export function urlHost(url: string | undefined): string | null {
  if (url === undefined || !URL.canParse(url)) return null;
  return new URL(url).host || null;
}

/** Channel names as the answer says them: the alert channels by their setting, registered endpoints as such. */
const CHANNEL_NAME: Record<Channel, string> = { email: 'email', chat: 'chat', alert_webhook: 'webhook', webhook: 'webhook_endpoint' };

/** The answer without `recent`: settings do not change while the gateway runs. */
export function alertSettingsView(input: AlertSettingsInput) {
  const on = input.enabled;
  const recipients = input.email.recipients;
  return {
    object: 'alert_settings' as const,
    enabled: on,
    cooldown_seconds: input.cooldownSeconds,
    rules: [
      ...parseRules(input.budgetRules).map((rule) => ({ type: 'budget.threshold_reached', enabled: on, threshold: rule.threshold, action: rule.action })),
      // Facts rather than rules: sent whether or not alerts are on (then to webhook endpoints only).
      { type: 'budget.exceeded', enabled: true },
      { type: 'error_rate.high', enabled: on && input.errorRate > 0, threshold: input.errorRate, window_seconds: ERROR_WINDOW_SECONDS, min_requests: input.errorRateMinRequests },
      { type: 'provider.down', enabled: on, window_seconds: DOWN_WINDOW_SECONDS, min_calls: DOWN_MIN_CALLS },
      { type: 'provider.circuit_opened', enabled: on && input.circuitBreaker, recovery_ms: input.circuitRecoveryMs },
      { type: 'key.expiring_soon', enabled: true, days_before: EXPIRING_WINDOW_DAYS },
    ],
    channels: [
      { type: 'email', enabled: on && input.email.enabled, target: recipients > 0 ? `${recipients} recipient${recipients === 1 ? '' : 's'}` : null },
      { type: 'chat', enabled: on && input.chat.enabled, target: urlHost(input.chat.url) },
      { type: 'webhook', enabled: on && input.webhook.enabled, target: urlHost(input.webhook.url) },
    ],
  };
}

/** The latest alert events the outbox holds, as answered. */
async function recentAlerts(outbox: Outbox) {
  const events = await outbox.latestEvents(ALERT_TYPES, RECENT_ALERTS);
  return events.map((event) => {
    const message = JSON.parse(event.payload) as { type: string; timestamp: string; data: Record<string, unknown> };
    return { id: event.eventId, type: message.type, timestamp: message.timestamp, data: message.data, channels: event.channels.map((channel) => CHANNEL_NAME[channel]) };
  });
}

export function alertAdminRoutes(input: AlertSettingsInput, outbox: Outbox): Route[] {
  const view = alertSettingsView(input);
  const route: Route = {
    method: 'GET',
    path: '/v1/admin/alerts',
    async handle(ctx) {
      adminOnly(ctx);
      sendJson(ctx, 200, { ...view, recent: await recentAlerts(outbox) }, NO_STORE);
    },
  };
  return [storeGuarded(route, 'alerts')];
}
