// Events: delivers what the gateway tells the outside world (plugins/events/catalogue.ts) as signed
// webhooks to registered endpoints (Standard Webhooks), and alerts by e-mail, chat and a generic
// webhook — through a durable outbox, retried, each delivery made by one replica. Adds no step; it
// observes finished requests (rate-limit refusals, provider failures, error rate) and serves the
// admin API at /v1/admin/webhooks and /v1/admin/alerts. Reads MODELGATE_WEBHOOK*, MODELGATE_SMTP_*,
// MODELGATE_EMAIL_*, MODELGATE_CHAT_*, MODELGATE_ALERT_* (MODELGATE_ALERTS_ENABLED and _RULES are
// declared by the cost guard, which evaluates the rules).
import { ConfigError } from '../core/config.js';
import { AlertStates } from '../core/alert-states.js';
import { takeLease } from '../core/store/lease.js';
import { defineSettings, type SettingsOf } from '../core/settings.js';
import type { PluginModule } from '../core/pipeline.js';
import { EVENT_TYPES } from './events/catalogue.js';
import { Outbox } from './events/outbox.js';
import { Endpoints } from './events/endpoints.js';
import { Dispatcher, SkipDelivery, type Sender } from './events/dispatcher.js';
import { FanOut, type AlertChannel } from './events/fan-out.js';
import { TrafficAlerts } from './events/traffic-alerts.js';
import { postJson, deliveryErrorFor } from './events/http-post.js';
import { checkWebhookUrl } from './events/destination-guard.js';
import { keyBytes, Signer } from './events/signing.js';
import type { EmailChannel } from './events/email.js';
import { ChatChannel } from './events/chat.js';
import { webhookAdminRoutes } from './events/admin-routes.js';
import { alertAdminRoutes } from './events/alert-settings.js';
import type { Delivery } from './events/outbox.js';
import { DeliveryError } from './events/types.js';

const settings = defineSettings({
  MODELGATE_WEBHOOKS_ENABLED: {
    type: 'boolean',
    default: false,
    variants: ['prod'],
    description: 'Send events as signed webhooks (Standard Webhooks) to the endpoints registered at /v1/admin/webhooks and MODELGATE_WEBHOOK_URL. Needs MODELGATE_WEBHOOK_SECRET.',
  },
  MODELGATE_WEBHOOK_SECRET: {
    type: 'string',
    secret: true,
    minLength: 16,
    description:
      'Key signing every webhook (HMAC-SHA256 per Standard Webhooks): `whsec_` + base64, as that specification\'s libraries take it, or any other string of at least 16 characters, used as the raw key. Receivers verify with it.',
  },
  MODELGATE_WEBHOOK_PREVIOUS_SECRETS: {
    type: 'array',
    default: [],
    secret: true,
    description: 'Comma-separated secrets still signed with while receivers move to a new MODELGATE_WEBHOOK_SECRET: each webhook carries one signature per secret.',
  },
  MODELGATE_WEBHOOK_TIMEOUT: { type: 'integer', default: 5000, minimum: 100, maximum: 60_000, description: 'ms one delivery attempt may take (connect and answer).' },
  MODELGATE_WEBHOOK_RETRIES: { type: 'integer', default: 3, minimum: 0, maximum: 20, description: 'Retries of a failed webhook delivery before it is failed (an admin may replay it). Alerts retry for a day.' },
  MODELGATE_WEBHOOK_RETRY_DELAY: {
    type: 'integer',
    default: 1000,
    minimum: 0,
    maximum: 3_600_000,
    description: 'ms before the first retry; each further retry waits twice as long (up to an hour; alerts five minutes). A longer Retry-After from the receiver wins.',
  },
  MODELGATE_WEBHOOK_URL: {
    type: 'string',
    pattern: '^https?://',
    hint: 'be an http(s) URL',
    secret: true,
    description: 'An endpoint registered from settings (id `wh_settings`, trusted: no address check), for every event type in MODELGATE_WEBHOOK_EVENTS.',
  },
  MODELGATE_WEBHOOK_EVENTS: { type: 'array', default: ['*'], description: 'Event types MODELGATE_WEBHOOK_URL takes (`*`: all; docs/events.md).' },
  MODELGATE_WEBHOOK_ALLOW_PRIVATE: {
    type: 'boolean',
    default: false,
    description: 'Let endpoints registered through the admin API point at loopback, private or link-local addresses (refused by default, after DNS resolution and again at each connection, against SSRF).',
  },
  MODELGATE_WEBHOOK_LOG_RETENTION: { type: 'integer', default: 30, minimum: 1, maximum: 3650, description: 'Days finished deliveries and their attempt log are kept.' },
  MODELGATE_EMAIL_ALERTS_ENABLED: { type: 'boolean', default: false, description: 'Send alerts by e-mail (SMTP). Needs MODELGATE_SMTP_HOST, MODELGATE_EMAIL_SENDER and MODELGATE_EMAIL_RECIPIENTS.' },
  MODELGATE_SMTP_HOST: { type: 'string', description: 'SMTP server host.' },
  MODELGATE_SMTP_PORT: { type: 'integer', default: 587, minimum: 1, maximum: 65535, description: 'SMTP server port: 465 speaks TLS from the start; any other port upgrades with STARTTLS whenever the server offers it.' },
  MODELGATE_SMTP_USERNAME: { type: 'string', description: 'SMTP user (no authentication when unset).' },
  MODELGATE_SMTP_PASSWORD: { type: 'string', secret: true, description: 'SMTP password.' },
  MODELGATE_SMTP_REQUIRE_TLS: { type: 'boolean', default: false, description: 'Refuse to send over a connection STARTTLS did not encrypt.' },
  MODELGATE_EMAIL_RECIPIENTS: { type: 'array', default: [], description: 'Comma-separated alert recipients.' },
  MODELGATE_EMAIL_SENDER: { type: 'string', description: 'From address of alert e-mails.' },
  MODELGATE_CHAT_ALERTS_ENABLED: { type: 'boolean', default: false, description: 'Send alerts to a Slack-compatible incoming webhook (about one message a second at most). Needs MODELGATE_CHAT_WEBHOOK_URL.' },
  MODELGATE_CHAT_WEBHOOK_URL: { type: 'string', secret: true, pattern: '^https?://', hint: 'be an http(s) URL', description: 'Chat incoming-webhook URL.' },
  MODELGATE_CHAT_CHANNEL: { type: 'string', default: '#ai-alerts', description: 'Chat channel for alerts.' },
  MODELGATE_CHAT_USERNAME: { type: 'string', default: 'modelgate', description: 'Name alerts are posted under.' },
  MODELGATE_WEBHOOK_ALERTS_ENABLED: {
    type: 'boolean',
    default: false,
    description: 'Send alerts to a generic webhook, signed like the other webhooks. Needs MODELGATE_WEBHOOK_ALERT_URL and MODELGATE_WEBHOOK_SECRET.',
  },
  MODELGATE_WEBHOOK_ALERT_URL: { type: 'string', pattern: '^https?://', hint: 'be an http(s) URL', secret: true, description: 'Webhook URL for alerts.' },
  MODELGATE_WEBHOOK_ALERT_HEADERS: {
    type: 'object',
    additionalProperties: { type: 'string' },
    secret: true,
    description: 'JSON object of extra headers sent with alert webhooks (e.g. an Authorization token).',
  },
  MODELGATE_ALERT_COOLDOWN: { type: 'integer', default: 300, minimum: 0, maximum: 86_400, description: 'Seconds before a provider-down, error-rate or circuit alert may fire again after it fired.' },
  MODELGATE_ALERT_ERROR_RATE: {
    type: 'number',
    default: 0.25,
    minimum: 0,
    maximum: 1,
    description: 'Share of 5xx answers over the last five minutes (on a replica) that fires error_rate.high; 0 turns it off.',
  },
  MODELGATE_ALERT_ERROR_RATE_MIN_REQUESTS: { type: 'integer', default: 20, minimum: 1, description: 'Requests in the five minutes before the error rate is judged.' },
});

type EventSettings = SettingsOf<typeof settings>;
/** Extra headers may not replace what the signature or the body depends on. */
const RESERVED_HEADERS = new Set(['content-type', 'content-length', 'host', 'webhook-id', 'webhook-timestamp', 'webhook-signature', 'transfer-encoding', 'connection']);
const SWEEP_MS = 3_600_000;
/** HMAC keys shorter than this are refused: 128 bits. */
const MIN_KEY_BYTES = 16;
/** A bare address: no display name, nothing that could end a header or add a recipient. */
const MAILBOX = /^[^\s@<>,;:"()\[\]\\]{1,64}@[A-Za-z0-9.-]{1,253}$/;

/** The setting's schema holds every value to a string. */
const alertHeaders = (s: EventSettings) => (s.MODELGATE_WEBHOOK_ALERT_HEADERS ?? {}) as Record<string, string>;

function problems(s: EventSettings): string[] {
  const out: string[] = [];
  const needSecret = s.MODELGATE_WEBHOOKS_ENABLED || s.MODELGATE_WEBHOOK_ALERTS_ENABLED;
  if (needSecret && !s.MODELGATE_WEBHOOK_SECRET) out.push('MODELGATE_WEBHOOK_SECRET: required when webhooks or webhook alerts are enabled (receivers verify every delivery with it)');
  if (s.MODELGATE_EMAIL_ALERTS_ENABLED) {
    if (!s.MODELGATE_SMTP_HOST) out.push('MODELGATE_SMTP_HOST: required when MODELGATE_EMAIL_ALERTS_ENABLED');
    if (!s.MODELGATE_EMAIL_SENDER) out.push('MODELGATE_EMAIL_SENDER: required when MODELGATE_EMAIL_ALERTS_ENABLED');
    if (s.MODELGATE_EMAIL_RECIPIENTS.length === 0) out.push('MODELGATE_EMAIL_RECIPIENTS: at least one recipient when MODELGATE_EMAIL_ALERTS_ENABLED');
    if (s.MODELGATE_SMTP_PASSWORD && !s.MODELGATE_SMTP_USERNAME) out.push('MODELGATE_SMTP_USERNAME: required with MODELGATE_SMTP_PASSWORD');
    for (const address of [s.MODELGATE_EMAIL_SENDER ?? '', ...s.MODELGATE_EMAIL_RECIPIENTS]) {
      if (address && !MAILBOX.test(address)) out.push(`MODELGATE_EMAIL_SENDER/RECIPIENTS: "${address.slice(0, 80)}" is not an e-mail address`);
    }
  }
  if (s.MODELGATE_CHAT_ALERTS_ENABLED && !s.MODELGATE_CHAT_WEBHOOK_URL) out.push('MODELGATE_CHAT_WEBHOOK_URL: required when MODELGATE_CHAT_ALERTS_ENABLED');
  if (s.MODELGATE_WEBHOOK_ALERTS_ENABLED && !s.MODELGATE_WEBHOOK_ALERT_URL) out.push('MODELGATE_WEBHOOK_ALERT_URL: required when MODELGATE_WEBHOOK_ALERTS_ENABLED');
  for (const name of Object.keys(alertHeaders(s))) {
    if (RESERVED_HEADERS.has(name.toLowerCase())) out.push(`MODELGATE_WEBHOOK_ALERT_HEADERS: "${name}" is set by the gateway itself`);
    else if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/.test(name)) out.push(`MODELGATE_WEBHOOK_ALERT_HEADERS: "${name.slice(0, 40)}" is not a header name`);
  }
  for (const value of Object.values(alertHeaders(s))) {
    // What Node sends as a header value: tab, visible ASCII and Latin-1; anything else would fail every delivery.
    if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(value)) out.push('MODELGATE_WEBHOOK_ALERT_HEADERS: a value holds a character a header cannot (a line break, a control character or one beyond Latin-1)');
  }
  for (const [name, secret] of [['MODELGATE_WEBHOOK_SECRET', s.MODELGATE_WEBHOOK_SECRET], ...s.MODELGATE_WEBHOOK_PREVIOUS_SECRETS.map((x) => ['MODELGATE_WEBHOOK_PREVIOUS_SECRETS', x])] as const) {
    if (secret === undefined) continue;
    try {
      const bytes = keyBytes(secret);
      if (bytes < MIN_KEY_BYTES) out.push(`${name}: a secret gives a ${bytes}-byte key; at least ${MIN_KEY_BYTES}`);
    } catch (error) {
      out.push(`${name}: ${(error as Error).message}`);
    }
  }
  for (const [name, url] of [
    ['MODELGATE_WEBHOOK_URL', s.MODELGATE_WEBHOOK_URL],
    ['MODELGATE_CHAT_WEBHOOK_URL', s.MODELGATE_CHAT_WEBHOOK_URL],
    ['MODELGATE_WEBHOOK_ALERT_URL', s.MODELGATE_WEBHOOK_ALERT_URL],
  ] as const) {
    if (url !== undefined && !URL.canParse(url)) out.push(`${name}: not a valid URL`);
  }
  for (const type of s.MODELGATE_WEBHOOK_EVENTS) {
    if (type !== '*' && !(EVENT_TYPES as readonly string[]).includes(type)) out.push(`MODELGATE_WEBHOOK_EVENTS: unknown event type "${type.slice(0, 60)}" (docs/events.md)`);
  }
  return out;
}

export const events: PluginModule<typeof settings> = {
  name: 'events',
  settings,
  async create(values, deps) {
    const s = values as EventSettings;
    const found = problems(s);
    if (found.length > 0) throw new ConfigError(found);
    const { logger } = deps;
    const store = deps.store();
    const outbox = new Outbox(store);
    const endpoints = new Endpoints(store);
    const states = new AlertStates(store);
    const alertsOn = values.MODELGATE_ALERTS_ENABLED !== false;
    await endpoints.bootstrap(s.MODELGATE_WEBHOOK_URL, [...s.MODELGATE_WEBHOOK_EVENTS]);
    await endpoints.refresh();
    endpoints.start();

    const secrets = [s.MODELGATE_WEBHOOK_SECRET, ...s.MODELGATE_WEBHOOK_PREVIOUS_SECRETS].filter((x): x is string => typeof x === 'string' && x.length > 0);
    const signer = secrets.length > 0 ? new Signer(secrets) : undefined;
    const timeoutMs = s.MODELGATE_WEBHOOK_TIMEOUT;

    const signedPost = async (url: string, delivery: Delivery, guard: boolean, extra: Record<string, string> = {}) => {
      const body = delivery.payload;
      const headers = { ...extra, ...signer!.headers(delivery.event_id, body, new Date()) };
      const result = await postJson(url, body, { headers, timeoutMs, guard });
      if (result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300) return result;
      throw deliveryErrorFor(result);
    };
    const senders: Partial<Record<string, Sender>> = {};
    if (s.MODELGATE_WEBHOOKS_ENABLED) {
      senders.webhook = async (_message, delivery) => {
        const endpoint = delivery.endpoint_id ? await endpoints.get(delivery.endpoint_id) : undefined;
        if (!endpoint) throw new SkipDelivery('endpoint deleted');
        if (!endpoint.enabled) throw new SkipDelivery('endpoint disabled');
        if (endpoint.source === 'settings') {
          // Retried: a replica that has the setting makes it (replicas are meant to share their settings).
          if (!s.MODELGATE_WEBHOOK_URL) throw new DeliveryError('MODELGATE_WEBHOOK_URL is not set on this replica');
          return signedPost(s.MODELGATE_WEBHOOK_URL, delivery, false);
        }
        // Endpoints registered through the API are checked at every connection (DNS may have changed since).
        return signedPost(endpoint.url, delivery, !s.MODELGATE_WEBHOOK_ALLOW_PRIVATE);
      };
    }
    const alertChannels = new Set<AlertChannel>();
    let email: EmailChannel | undefined;
    if (alertsOn && s.MODELGATE_EMAIL_ALERTS_ENABLED) {
      // Loaded only when e-mail is on: the mail library is the largest part of events.
      const { EmailChannel } = await import('./events/email.js');
      email = new EmailChannel({
        host: s.MODELGATE_SMTP_HOST!,
        port: s.MODELGATE_SMTP_PORT,
        username: s.MODELGATE_SMTP_USERNAME,
        password: s.MODELGATE_SMTP_PASSWORD,
        requireTls: s.MODELGATE_SMTP_REQUIRE_TLS,
        sender: s.MODELGATE_EMAIL_SENDER!,
        recipients: [...s.MODELGATE_EMAIL_RECIPIENTS],
        timeoutMs,
      });
      senders.email = (message, delivery) => email!.send(message, delivery.event_id);
      if (s.MODELGATE_SMTP_USERNAME && !s.MODELGATE_SMTP_REQUIRE_TLS && s.MODELGATE_SMTP_PORT !== 465) {
        logger.warn('events: SMTP credentials are sent in the clear should the server not offer STARTTLS (or something on the way strip it): set MODELGATE_SMTP_REQUIRE_TLS=true');
      }
      alertChannels.add('email');
    }
    if (alertsOn && s.MODELGATE_CHAT_ALERTS_ENABLED) {
      const chat = new ChatChannel({ url: s.MODELGATE_CHAT_WEBHOOK_URL!, channel: s.MODELGATE_CHAT_CHANNEL, username: s.MODELGATE_CHAT_USERNAME, timeoutMs, post: postJson });
      senders.chat = (message) => chat.send(message);
      alertChannels.add('chat');
    }
    if (alertsOn && s.MODELGATE_WEBHOOK_ALERTS_ENABLED) {
      const url = s.MODELGATE_WEBHOOK_ALERT_URL!;
      const extra = alertHeaders(s);
      senders.alert_webhook = (_message, delivery) => signedPost(url, delivery, false, extra);
      alertChannels.add('alert_webhook');
    }

    const dispatcher = new Dispatcher({
      outbox,
      senders,
      policy: { retries: s.MODELGATE_WEBHOOK_RETRIES, delayMs: s.MODELGATE_WEBHOOK_RETRY_DELAY },
      logger,
      timeoutMs,
      gone: (id) => endpoints.disable(id, 'gone'),
      ended: (channel, outcome) => deps.events.emit('delivery', { channel, outcome }),
    });
    const fanOut = new FanOut({
      outbox,
      endpoints,
      webhooks: s.MODELGATE_WEBHOOKS_ENABLED,
      alertChannels,
      anonymizer: deps.anonymizer,
      logger,
      written: () => dispatcher.wake(),
    });
    const onNotify = fanOut.accept.bind(fanOut);
    deps.events.on('notify', onNotify);
    const traffic = new TrafficAlerts({
      store,
      states,
      logger,
      notify: (notification) => deps.events.emit('notify', notification),
      alerts: alertsOn,
      cooldownMs: s.MODELGATE_ALERT_COOLDOWN * 1000,
      errorRate: s.MODELGATE_ALERT_ERROR_RATE,
      errorRateMinRequests: s.MODELGATE_ALERT_ERROR_RATE_MIN_REQUESTS,
    });
    const recoveryMs = typeof values.MODELGATE_CIRCUIT_BREAKER_TIMEOUT === 'number' ? values.MODELGATE_CIRCUIT_BREAKER_TIMEOUT : 0;
    deps.health.onCircuitChange((provider, state) => void traffic.circuit(provider, state, recoveryMs));
    // Deliveries left in the outbox by an earlier run (or another replica) go out from the start.
    dispatcher.start();
    traffic.start();
    const keepMs = s.MODELGATE_WEBHOOK_LOG_RETENTION * 86_400_000;
    const sweeping = setInterval(() => {
      void takeLease(store, 'events-sweeper', SWEEP_MS)
        .then(async (mine) => {
          if (!mine) return;
          // A batch at a time, yielding between: on SQLite each delete holds the event loop.
          while ((await outbox.sweep(Date.now() - keepMs)) > 0) await new Promise((resolve) => setImmediate(resolve));
          // Markers outlive what they mark: a month's budget, a key's expiry (announced days before).
          await states.sweep(Date.now() - 7 * 86_400_000, Date.now() - 62 * 86_400_000);
        })
        .catch((error: Error) => logger.warn({ err: error.message }, 'events: old deliveries not swept'));
    }, SWEEP_MS).unref();

    return {
      name: 'events',
      routes: [
        ...webhookAdminRoutes({
          endpoints,
          outbox,
          bodyIdleMs: values.MODELGATE_BODY_IDLE_TIMEOUT as number,
          allowPrivate: s.MODELGATE_WEBHOOK_ALLOW_PRIVATE,
          eventTypes: EVENT_TYPES,
          checkUrl: checkWebhookUrl,
          wake: () => dispatcher.wake(),
        }),
        ...alertAdminRoutes(
          {
            enabled: alertsOn,
            cooldownSeconds: s.MODELGATE_ALERT_COOLDOWN,
            // Declared by the cost guard, which evaluates them.
            budgetRules: Array.isArray(values.MODELGATE_ALERT_RULES) ? (values.MODELGATE_ALERT_RULES as string[]) : [],
            errorRate: s.MODELGATE_ALERT_ERROR_RATE,
            errorRateMinRequests: s.MODELGATE_ALERT_ERROR_RATE_MIN_REQUESTS,
            circuitBreaker: values.MODELGATE_CIRCUIT_BREAKER_ENABLED !== false,
            circuitRecoveryMs: recoveryMs,
            email: { enabled: s.MODELGATE_EMAIL_ALERTS_ENABLED, recipients: s.MODELGATE_EMAIL_RECIPIENTS.length },
            chat: { enabled: s.MODELGATE_CHAT_ALERTS_ENABLED, url: s.MODELGATE_CHAT_WEBHOOK_URL },
            webhook: { enabled: s.MODELGATE_WEBHOOK_ALERTS_ENABLED, url: s.MODELGATE_WEBHOOK_ALERT_URL },
          },
          outbox,
        ),
      ],
      observe(ctx) {
        traffic.observe(ctx);
      },
      async close() {
        clearInterval(sweeping);
        endpoints.stop();
        await traffic.close();
        deps.events.off('notify', onNotify);
        await fanOut.close();
        await dispatcher.close();
        email?.close();
      },
    };
  },
};
