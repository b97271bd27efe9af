// The alert settings as plugins/events/alert-settings.ts answers them: whether alerts are on, the
// cool-down, each rule with its numbers, each alert channel and where it sends (a host or a count of
// recipients, never a URL's path or query or a credential), and the latest alert events.
import type { Schema } from '../types.js';

const dateTime = { type: 'string', format: 'date-time' };
const fraction = { type: 'number', minimum: 0, maximum: 1 };
const count = { type: 'integer', minimum: 0 };
const enabled = { type: 'boolean', description: 'Whether the gateway watches for it now (with alerts off, only the facts `budget.exceeded` and `key.expiring_soon` are still sent, to webhook endpoints).' };

/** A rule: the event it sends, whether it is watched, and its numbers. */
const rule = (type: string, description: string, numbers: Record<string, Schema> = {}) => ({
  type: 'object',
  description,
  required: ['type', 'enabled', ...Object.keys(numbers)],
  properties: { type: { const: type }, enabled, ...numbers },
});

const rules = {
  type: 'array',
  description: 'Every alert the gateway can raise: the rules of MODELGATE_ALERT_RULES (sorted by threshold), then the others with their settings.',
  items: {
    oneOf: [
      rule('budget.threshold_reached', 'A rule of MODELGATE_ALERT_RULES: fires once per budget period (the global budget and each key\'s own) when spend reaches `threshold` of the limit.', {
        threshold: { type: 'number', minimum: 0, description: 'A fraction of the limit (0.8 is 80%).' },
        action: { type: 'string', enum: ['email', 'chat', 'webhook', 'pause'], description: 'The alert channel it goes to, or `pause` (spending refused until the period resets or an admin resumes).' },
      }),
      rule('budget.exceeded', 'A budget refused a request: said once per scope and period.'),
      rule('error_rate.high', "The gateway's share of 5xx answers over the window reached MODELGATE_ALERT_ERROR_RATE (0: not watched).", {
        threshold: fraction,
        window_seconds: count,
        min_requests: { type: 'integer', minimum: 1, description: 'Requests in the window before the rate is judged (MODELGATE_ALERT_ERROR_RATE_MIN_REQUESTS).' },
      }),
      rule('provider.down', 'A provider called at least `min_calls` times in the window answered none.', { window_seconds: count, min_calls: count }),
      rule('provider.circuit_opened', "A provider's circuit breaker opened (sent to webhook endpoints, not to the alert channels).", {
        recovery_ms: { ...count, description: 'How long a circuit stays open before a probe (MODELGATE_CIRCUIT_BREAKER_TIMEOUT).' },
      }),
      rule('key.expiring_soon', 'An API key expires within `days_before` days: said once per key and expiry.', { days_before: count }),
    ],
  },
};

const channel = {
  type: 'object',
  required: ['type', 'enabled', 'target'],
  properties: {
    type: { type: 'string', enum: ['email', 'chat', 'webhook'], description: 'MODELGATE_EMAIL_ALERTS_*, MODELGATE_CHAT_* or MODELGATE_WEBHOOK_ALERT_*.' },
    enabled: { type: 'boolean', description: 'Whether alerts go to it now: its setting on, and alerts on.' },
    target: {
      anyOf: [{ type: 'string' }, { type: 'null' }],
      description: 'Where it sends, said without secrets: for e-mail the number of recipients (`2 recipients`), for chat and webhook the URL\'s host (a token in its path or query is never shown); null when not set.',
    },
  },
};

const recent = {
  type: 'array',
  maxItems: 50,
  description:
    'The latest alert events the outbox holds, newest first: those queued to an alert channel or a webhook endpoint (an alert with no destination is not recorded), kept MODELGATE_WEBHOOK_LOG_RETENTION days.',
  items: {
    type: 'object',
    required: ['id', 'type', 'timestamp', 'data', 'channels'],
    properties: {
      id: { type: 'string', description: 'The event id (`msg_…`): the `webhook-id` its webhooks carried.' },
      type: { type: 'string', description: 'Its event type (docs/events.md).' },
      timestamp: { ...dateTime, description: 'When it happened.' },
      data: { type: 'object', additionalProperties: true, description: "The event's data, as its webhooks carried it (docs/events.md)." },
      channels: {
        type: 'array',
        items: { type: 'string', enum: ['email', 'chat', 'webhook', 'webhook_endpoint'] },
        description: 'Where it was queued: the alert channels, and `webhook_endpoint` for registered endpoints.',
      },
    },
  },
};

export const alertSchemas = {
  AlertSettings: {
    type: 'object',
    description: 'The alerts as this gateway runs them (set by its settings).',
    required: ['object', 'enabled', 'cooldown_seconds', 'rules', 'channels', 'recent'],
    properties: {
      object: { const: 'alert_settings' },
      enabled: { type: 'boolean', description: 'MODELGATE_ALERTS_ENABLED: rules are evaluated and alerts go to the channels.' },
      cooldown_seconds: { ...count, description: 'MODELGATE_ALERT_COOLDOWN: how long before a provider-down, error-rate or circuit alert may fire again.' },
      rules,
      channels: { type: 'array', items: channel },
      recent,
    },
  },
} as const satisfies Record<string, Schema>;
