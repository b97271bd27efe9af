// GET /v1/admin/alerts on real gateways: the rules of MODELGATE_ALERT_RULES and the other alerts
// with their numbers, each alert channel with where it sends said without a secret (a webhook URL's
// host only, never its path, query or user; recipients counted; no SMTP credential, no header), 403
// for a key that is not an admin's, and `recent` filling once a budget threshold fires.
import t from 'tap';
import { startGateway, call, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { startFakeOpenAI, openAIResponder, PROVIDER_KEYS } from '../helpers/fakes.js';
import type { FakeProvider } from '../helpers/fake-provider.js';
import { chatRequest, FIXTURE_COST, testCatalog } from '../helpers/money.js';
import { startReceiver, startSmtp, waitFor, type SmtpReceiver } from '../helpers/receivers.js';

const SMTP_PASSWORD = 'smtp-pass-0f9e8d7c';
const CHAT_URL = 'https://hooks.example.com/services/T000/SECRET?token=chat-token-1';
const ALERT_URL = 'https://alerter:hook-pass-5a4b@alerts.example.com:8443/hook/SECRET2?sig=alert-sig-2';
const ALERT_TOKEN = 'Bearer alert-header-token-3';
/** Nothing of these may be in an answer. */
const SECRETS = [SMTP_PASSWORD, 'smtp-user', 'ops@example.test', 'finance@example.test', 'SECRET', 'T000', 'services', 'chat-token-1', 'alerter', 'hook-pass-5a4b', '/hook', 'alert-sig-2', 'alert-header-token-3'];

let upstream: FakeProvider;
let smtp: SmtpReceiver;
t.before(async () => {
  upstream = await startFakeOpenAI();
  upstream.fallback = openAIResponder();
  smtp = await startSmtp();
});
t.teardown(async () => {
  await upstream.close();
  await smtp.close();
});

const provider = () => ({ ...PROTOCOL_ONLY, OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_MODEL_CATALOG: testCatalog() });

t.test('the rules and channels configured, with where each channel sends and no secret', async (t) => {
  const gateway = await startGateway({
    ...provider(),
    MODELGATE_ALERT_RULES: '0.8:email,0.5:chat,0.8:webhook,1.0:pause',
    MODELGATE_ALERT_COOLDOWN: '120',
    MODELGATE_ALERT_ERROR_RATE: '0.1',
    MODELGATE_ALERT_ERROR_RATE_MIN_REQUESTS: '40',
    MODELGATE_CIRCUIT_BREAKER_TIMEOUT: '15000',
    MODELGATE_EMAIL_ALERTS_ENABLED: 'true',
    MODELGATE_SMTP_HOST: '127.0.0.1',
    MODELGATE_SMTP_PORT: String(smtp.port),
    MODELGATE_SMTP_USERNAME: 'smtp-user',
    MODELGATE_SMTP_PASSWORD: SMTP_PASSWORD,
    MODELGATE_SMTP_REQUIRE_TLS: 'true',
    MODELGATE_EMAIL_SENDER: 'gateway@example.test',
    MODELGATE_EMAIL_RECIPIENTS: 'ops@example.test,finance@example.test',
    MODELGATE_CHAT_ALERTS_ENABLED: 'true',
    MODELGATE_CHAT_WEBHOOK_URL: CHAT_URL,
    MODELGATE_WEBHOOK_ALERTS_ENABLED: 'false',
    MODELGATE_WEBHOOK_ALERT_URL: ALERT_URL,
    MODELGATE_WEBHOOK_ALERT_HEADERS: JSON.stringify({ Authorization: ALERT_TOKEN }),
    MODELGATE_WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  });
  t.teardown(() => gateway.close());

  const answer = await call(gateway.url, '/admin/alerts');
  t.equal(answer.status, 200);
  t.equal(answer.headers.get('cache-control'), 'no-store');
  t.same(answer.json, {
    object: 'alert_settings',
    enabled: true,
    cooldown_seconds: 120,
    rules: [
      { type: 'budget.threshold_reached', enabled: true, threshold: 0.5, action: 'chat' },
      { type: 'budget.threshold_reached', enabled: true, threshold: 0.8, action: 'email' },
      { type: 'budget.threshold_reached', enabled: true, threshold: 0.8, action: 'webhook' },
      { type: 'budget.threshold_reached', enabled: true, threshold: 1, action: 'pause' },
      { type: 'budget.exceeded', enabled: true },
      { type: 'error_rate.high', enabled: true, threshold: 0.1, window_seconds: 300, min_requests: 40 },
      { type: 'provider.down', enabled: true, window_seconds: 60, min_calls: 5 },
      { type: 'provider.circuit_opened', enabled: false, recovery_ms: 15000 },
      { type: 'key.expiring_soon', enabled: true, days_before: 7 },
    ],
    channels: [
      { type: 'email', enabled: true, target: '2 recipients' },
      { type: 'chat', enabled: true, target: 'hooks.example.com' },
      { type: 'webhook', enabled: false, target: 'alerts.example.com:8443' },
    ],
    recent: [],
  }, 'rules sorted by threshold, then the other alerts; a channel set but off still says its host; circuits off with the breaker (PROTOCOL_ONLY)');
  for (const secret of SECRETS) t.notOk(answer.text.includes(secret), `the answer holds no "${secret}"`);

  const created = await call(gateway.url, '/admin/keys', { method: 'POST', body: JSON.stringify({ name: 'tenant' }) });
  t.equal(created.status, 201);
  const refused = await call(gateway.url, '/admin/alerts', { key: created.json.key });
  t.equal(refused.status, 403);
  t.equal(refused.json.error.code, 'admin_required');
  t.notOk(SECRETS.some((secret) => refused.text.includes(secret)));
  t.equal((await call(gateway.url, '/admin/alerts', { key: null })).status, 401, 'and no key, no answer');
});

t.test('with alerts off, nothing is watched and no channel takes alerts', async (t) => {
  const gateway = await startGateway({ ...provider(), MODELGATE_ALERTS_ENABLED: 'false', MODELGATE_ALERT_RULES: '0.9:chat', MODELGATE_CHAT_ALERTS_ENABLED: 'true', MODELGATE_CHAT_WEBHOOK_URL: CHAT_URL, MODELGATE_ALERT_ERROR_RATE: '0' });
  t.teardown(() => gateway.close());
  const { status, json } = await call(gateway.url, '/admin/alerts');
  t.equal(status, 200);
  t.equal(json.enabled, false);
  t.same(
    json.rules.map((rule: { type: string; enabled: boolean }) => [rule.type, rule.enabled]),
    [
      ['budget.threshold_reached', false],
      ['budget.exceeded', true],
      ['error_rate.high', false],
      ['provider.down', false],
      ['provider.circuit_opened', false],
      ['key.expiring_soon', true],
    ],
  );
  t.same(json.channels, [
    { type: 'email', enabled: false, target: null },
    { type: 'chat', enabled: false, target: 'hooks.example.com' },
    { type: 'webhook', enabled: false, target: null },
  ]);
});

t.test('a budget threshold that fires is in recent, newest first, with the channel it went to', async (t) => {
  const chat = await startReceiver();
  t.teardown(() => chat.close());
  const gateway = await startGateway({
    ...provider(),
    MODELGATE_LEDGER_FLUSH_INTERVAL: '100',
    // Each request is billed a tenth of the day's limit.
    MODELGATE_DAILY_COST_LIMIT: String(10 * FIXTURE_COST),
    MODELGATE_ALERT_RULES: '0.2:chat,0.4:chat',
    MODELGATE_CHAT_ALERTS_ENABLED: 'true',
    MODELGATE_CHAT_WEBHOOK_URL: `${chat.url}/services/T000/SECRET`,
  });
  t.teardown(() => gateway.close());
  const send = () => call(gateway.url, '/chat/completions', { body: JSON.stringify(chatRequest(8)) });
  for (let i = 0; i < 2; i++) t.equal((await send()).status, 200);
  t.ok(await waitFor(() => chat.accepted.length === 1, 10_000), 'the first threshold reached the chat');
  for (let i = 0; i < 2; i++) t.equal((await send()).status, 200);
  t.ok(await waitFor(() => chat.accepted.length === 2, 10_000), 'and the second');

  const answer = await call(gateway.url, '/admin/alerts');
  t.equal(answer.status, 200);
  t.same(answer.json.channels[1], { type: 'chat', enabled: true, target: `127.0.0.1:${chat.port}` }, 'the host, not the path with its token');
  const recent = answer.json.recent as Array<{ id: string; type: string; timestamp: string; data: Record<string, unknown>; channels: string[] }>;
  t.equal(recent.length, 2);
  t.same(
    recent.map((event) => [event.type, event.data.threshold, event.data.action, event.data.scope, event.channels]),
    [
      ['budget.threshold_reached', 0.4, 'chat', 'global', ['chat']],
      ['budget.threshold_reached', 0.2, 'chat', 'global', ['chat']],
    ],
    'newest first',
  );
  t.match(recent[0]!.id, /^msg_[0-9a-f]{24}$/);
  t.ok(Date.parse(recent[0]!.timestamp) >= Date.parse(recent[1]!.timestamp));
  t.notOk(answer.text.includes('SECRET'), 'the chat URL path is not answered');
});
