// Settings of spec §2.2 for features that are not built yet. They are declared so a typo or a bad
// value fails at boot like any other, and so config/example.env documents them; the app warns at
// boot when one of them is set explicitly, because nothing acts on it yet. Each moves beside its
// code when the feature lands.
import { defineSettings } from './settings.js';

export const plannedSettings = defineSettings({
  // Alert delivery and webhooks
  MODELGATE_WEBHOOKS_ENABLED: { type: 'boolean', default: false, variants: ['prod'], description: 'Send outbound webhooks for events.' },
  MODELGATE_WEBHOOK_SECRET: { type: 'string', secret: true, description: 'HMAC-SHA256 secret signing outbound webhooks.' },
  MODELGATE_WEBHOOK_TIMEOUT: { type: 'integer', default: 5000, minimum: 1, description: 'ms a webhook delivery may take.' },
  MODELGATE_WEBHOOK_RETRIES: { type: 'integer', default: 3, minimum: 0, description: 'Retries of a failed webhook delivery.' },
  MODELGATE_WEBHOOK_RETRY_DELAY: { type: 'integer', default: 1000, minimum: 0, description: 'ms between webhook retries.' },
  MODELGATE_EMAIL_ALERTS_ENABLED: { type: 'boolean', default: false, description: 'Send alerts by e-mail (SMTP).' },
  MODELGATE_SMTP_HOST: { type: 'string', description: 'SMTP server host.' },
  MODELGATE_SMTP_PORT: { type: 'integer', default: 587, minimum: 1, maximum: 65535, description: 'SMTP server port.' },
  MODELGATE_SMTP_USERNAME: { type: 'string', description: 'SMTP user.' },
  MODELGATE_SMTP_PASSWORD: { type: 'string', secret: true, description: 'SMTP password.' },
  MODELGATE_EMAIL_RECIPIENTS: { type: 'array', default: [], description: 'Comma-separated alert recipients.' },
  MODELGATE_EMAIL_SENDER: { type: 'string', description: 'From address of alert e-mails.' },
  MODELGATE_CHAT_ALERTS_ENABLED: { type: 'boolean', default: false, description: 'Send alerts to a chat incoming-webhook.' },
  MODELGATE_CHAT_WEBHOOK_URL: { type: 'string', secret: true, pattern: '^https?://', hint: 'be an http(s) URL', description: 'Chat incoming-webhook URL.' },
  MODELGATE_CHAT_CHANNEL: { type: 'string', default: '#ai-alerts', description: 'Chat channel for alerts.' },
  MODELGATE_CHAT_USERNAME: { type: 'string', default: 'modelgate', description: 'Name alerts are posted under.' },
  MODELGATE_WEBHOOK_ALERTS_ENABLED: { type: 'boolean', default: false, description: 'Send alerts to a generic webhook.' },
  MODELGATE_WEBHOOK_ALERT_URL: { type: 'string', pattern: '^https?://', hint: 'be an http(s) URL', description: 'Webhook URL for alerts.' },
  MODELGATE_WEBHOOK_ALERT_HEADERS: {
    type: 'object',
    additionalProperties: { type: 'string' },
    secret: true,
    description: 'JSON object of extra headers sent with alert webhooks.',
  },
  // A/B testing
  MODELGATE_AB_TESTING_ENABLED: { type: 'boolean', default: false, description: 'Split traffic between routing variants.' },
  MODELGATE_AB_TESTING_DURATION: { type: 'integer', default: 7, minimum: 1, description: 'Days an A/B test runs.' },
  MODELGATE_AB_TESTING_METRICS: { type: 'array', default: [], description: 'Metrics compared (cost, quality_score, user_satisfaction).' },
});

/** Defaults that are on but act on nothing yet are not worth a warning; an explicit value is. */
export const PLANNED = new Set(Object.keys(plannedSettings));
