// Budget alerts on three replicas sharing Redis and PostgreSQL: crossing 50%, 80% and 100% of the
// daily budget — requests through all three at once — sends exactly one e-mail, one chat message
// and one signed alert webhook per threshold, each taken by a real receiver (an SMTP server, a chat
// incoming-webhook, a Standard Webhooks verifier), and one signed webhook per rule to the endpoint
// subscribed to budget.threshold_reached. Spending past the limit sends budget.exceeded once however
// many requests are refused.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { startGateway, call, PROTOCOL_ONLY, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, openAIResponder, PROVIDER_KEYS } from '../helpers/fakes.js';
import type { FakeProvider } from '../helpers/fake-provider.js';
import { testPrefix, redisEnv, flushPrefix } from '../helpers/redis.js';
import { postgresEnv, testSchema } from '../helpers/database.js';
import { chatRequest, estimateOf, FIXTURE_COST, testCatalog } from '../helpers/money.js';
import { startReceiver, startSmtp, waitFor, type HttpReceiver, type SmtpReceiver } from '../helpers/receivers.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const THRESHOLDS = [0.5, 0.8, 1];
const RULES = THRESHOLDS.flatMap((threshold) => ['email', 'chat', 'webhook'].map((action) => `${threshold}:${action}`)).join(',');

let upstream: FakeProvider;
let smtp: SmtpReceiver;
let chat: HttpReceiver;
let alertHook: HttpReceiver;
let endpoint: HttpReceiver;
const prefix = testPrefix();
const catalog = testCatalog();

t.before(async () => {
  upstream = await startFakeOpenAI();
  upstream.fallback = openAIResponder();
  smtp = await startSmtp();
  chat = await startReceiver();
  alertHook = await startReceiver(SECRET);
  endpoint = await startReceiver(SECRET);
});
t.teardown(async () => {
  await Promise.all([upstream.close(), smtp.close(), chat.close(), alertHook.close(), endpoint.close()]);
  await flushPrefix(prefix);
});

function replicaEnv(): Record<string, string> {
  return {
    ...PROTOCOL_ONLY,
    ...redisEnv(prefix),
    ...postgresEnv(schema),
    REDIS_COMMAND_TIMEOUT: '5000',
    MODELGATE_STORE: 'redis',
    MODELGATE_LEDGER_FLUSH_INTERVAL: '100',
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_MODEL_CATALOG: catalog,
    MODELGATE_DAILY_COST_LIMIT: String(10 * FIXTURE_COST),
    MODELGATE_ALERT_RULES: RULES,
    MODELGATE_WEBHOOK_SECRET: SECRET,
    MODELGATE_WEBHOOKS_ENABLED: 'true',
    MODELGATE_WEBHOOK_URL: endpoint.url,
    MODELGATE_WEBHOOK_EVENTS: 'budget.threshold_reached,budget.exceeded',
    MODELGATE_EMAIL_ALERTS_ENABLED: 'true',
    MODELGATE_SMTP_HOST: '127.0.0.1',
    MODELGATE_SMTP_PORT: String(smtp.port),
    MODELGATE_EMAIL_SENDER: 'gateway@example.test',
    MODELGATE_EMAIL_RECIPIENTS: 'ops@example.test,finance@example.test',
    MODELGATE_CHAT_ALERTS_ENABLED: 'true',
    MODELGATE_CHAT_WEBHOOK_URL: chat.url,
    MODELGATE_CHAT_CHANNEL: '#spend',
    MODELGATE_WEBHOOK_ALERTS_ENABLED: 'true',
    MODELGATE_WEBHOOK_ALERT_URL: alertHook.url,
    MODELGATE_WEBHOOK_ALERT_HEADERS: '{"Authorization":"Bearer alert-token"}',
  };
}
const schema = testSchema();

t.test('three replicas crossing 50/80/100% together send one e-mail, one chat message and one signed webhook per threshold', async (t) => {
  const replicas: TestGateway[] = [];
  for (let i = 0; i < 3; i++) replicas.push(await startGateway(replicaEnv()));
  t.teardown(async () => {
    for (const replica of replicas) await replica.close();
  });
  // Each request is billed FIXTURE_COST, a tenth of the day's limit, and reserves less than that.
  const request = chatRequest(8);
  t.ok(estimateOf(request) < FIXTURE_COST, 'ten requests fit the limit exactly');
  const send = (i: number) => call(replicas[i % 3]!.url, '/chat/completions', { body: JSON.stringify(request) });
  let sent = 0;
  for (const batch of [5, 3, 2]) {
    const answers = await Promise.all(Array.from({ length: batch }, () => send(sent++)));
    t.same(
      answers.map((answer) => answer.status),
      Array(batch).fill(200),
      `${batch} requests through the three replicas at once`,
    );
  }

  const delivered = () => smtp.mails.length >= 3 && chat.accepted.length >= 3 && alertHook.accepted.length >= 3 && endpoint.accepted.length >= 9;
  t.ok(await waitFor(delivered, 30_000), 'every alert arrived');
  // Late duplicates would arrive within a few polls.
  await new Promise((resolve) => setTimeout(resolve, 2500));

  t.equal(smtp.mails.length, 3, 'one e-mail per threshold');
  t.equal(chat.accepted.length, 3, 'one chat message per threshold');
  t.equal(alertHook.accepted.length, 3, 'one alert webhook per threshold');
  t.equal(endpoint.accepted.length, 9, 'one webhook per rule to the subscribed endpoint');
  t.equal(alertHook.requests.length, 3, 'no unsigned or failed attempt');

  const mailThresholds = smtp.mails.map((mail) => /Subject: (.*)/.exec(mail.raw)?.[1] ?? '').sort();
  for (const [i, percent] of ['100%', '50%', '80%'].entries()) t.match(mailThresholds[i], percent, `a subject names ${percent}`);
  const mail = smtp.mails[0]!;
  t.same(mail.to.sort(), ['finance@example.test', 'ops@example.test']);
  t.equal(mail.from, 'gateway@example.test');
  t.match(mail.raw, /Content-Type: text\/plain/);
  t.match(mail.raw, /Content-Type: text\/html/);

  const chatThresholds = chat.accepted.map((message) => message.json.text as string);
  t.ok(
    chat.accepted.every((message) => message.json.channel === '#spend' && message.json.username === 'modelgate' && Array.isArray(message.json.blocks)),
    'Slack-shaped messages to the channel, under the username',
  );
  t.equal(new Set(chatThresholds).size, 3, 'three different messages');

  const alertData = alertHook.accepted.map((received) => received.json);
  t.same(alertData.map((message) => message.data.threshold).sort(), THRESHOLDS, 'one webhook per threshold');
  t.ok(
    alertData.every((message) => message.type === 'budget.threshold_reached' && message.data.action === 'webhook' && message.data.scope === 'global'),
    'the rule that fired',
  );
  t.ok(
    alertHook.accepted.every((received) => received.headers.authorization === 'Bearer alert-token'),
    'extra headers sent',
  );
  const last = alertData.find((message) => message.data.threshold === 1)!;
  t.equal(last.data.period, 'day');
  t.ok(last.data.spent_usd >= last.data.limit_usd, 'spent and limit said');

  const rules = endpoint.accepted.map((received) => `${received.json.data.threshold}:${received.json.data.action}`).sort();
  t.same(rules, RULES.split(',').sort(), 'the endpoint got each rule once');
  t.equal(new Set(endpoint.accepted.map((received) => received.headers['webhook-id'])).size, 9, 'a webhook id per event');

  // Past the limit every request is refused; the exceeded budget is said once.
  const refused = await Promise.all(Array.from({ length: 30 }, (_, i) => send(i)));
  t.ok(
    refused.every((answer) => answer.status === 429),
    'refused past the limit',
  );
  t.ok(await waitFor(() => endpoint.accepted.some((received) => received.json.type === 'budget.exceeded')), 'budget.exceeded arrived');
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.equal(endpoint.accepted.filter((received) => received.json.type === 'budget.exceeded').length, 1, 'once, not once per refused request');
});
