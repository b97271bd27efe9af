// Delivery through a real gateway: a webhook receiver that is down for a while gets the event once it
// is back, with the same webhook-id on every attempt; events left in the outbox when a gateway stops
// are delivered by the next start; an alert e-mail reaches an SMTP server that was down when the
// alert fired; an endpoint answering 410 is disabled; an endpoint registered through the API may
// not point at a private address (the SSRF guard), unless MODELGATE_WEBHOOK_ALLOW_PRIVATE says so.
import t from 'tap';
import { startGateway, call, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { testDataDir } from '../helpers/database.js';
import { freePort, startReceiver, startSmtp, waitFor } from '../helpers/receivers.js';
import { startFakeOpenAI, openAIResponder, PROVIDER_KEYS } from '../helpers/fakes.js';

const SECRET = 'a raw secret of the operator, 32+ chars';

function events(extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...PROTOCOL_ONLY,
    MODELGATE_WEBHOOKS_ENABLED: 'true',
    MODELGATE_WEBHOOK_SECRET: SECRET,
    MODELGATE_WEBHOOK_RETRY_DELAY: '100',
    MODELGATE_WEBHOOK_RETRIES: '8',
    MODELGATE_WEBHOOK_TIMEOUT: '2000',
    ...extra,
  };
}

const createKey = (url: string, name: string) => call(url, '/admin/keys', { method: 'POST', body: JSON.stringify({ name }) });

t.test('a receiver down for a while gets the event when it is back, with the same webhook-id on every attempt', async (t) => {
  const receiver = await startReceiver(Buffer.from(SECRET, 'utf8'));
  t.teardown(() => receiver.close());
  receiver.answer = { status: 503 };
  const gateway = await startGateway(events({ MODELGATE_WEBHOOK_URL: receiver.url, MODELGATE_WEBHOOK_EVENTS: 'key.created' }));
  t.teardown(() => gateway.close());
  t.equal((await createKey(gateway.url, 'outage')).status, 201);
  t.ok(await waitFor(() => receiver.requests.length >= 3), 'attempts while it is down');
  receiver.answer = { status: 200 };
  t.ok(await waitFor(() => receiver.accepted.length === 1), 'taken once it is back');
  const ids = new Set(receiver.requests.map((request) => request.headers['webhook-id']));
  t.equal(ids.size, 1, 'one webhook-id');
  t.ok(receiver.requests.every((request) => request.verified), 'every attempt verifies with the raw secret');
  t.match(receiver.accepted[0]!.json, { type: 'key.created', data: { name: 'outage', by_key_id: 'bootstrap' } });
  t.notOk(receiver.accepted[0]!.body.includes('uc_'), 'no key secret in the event');

  const list = await call(gateway.url, '/admin/webhooks/wh_settings/deliveries');
  const [delivery] = list.json.data;
  t.equal(delivery.status, 'delivered');
  t.ok(delivery.attempts >= 4);
  t.same(
    delivery.attempt_log.slice(0, 3).map((attempt: { ok: boolean; status_code: number }) => [attempt.ok, attempt.status_code]),
    [
      [false, 503],
      [false, 503],
      [false, 503],
    ],
  );
  t.same(delivery.attempt_log.at(-1).status_code, 200);
  t.notOk(gateway.logs.some((line) => JSON.stringify(line).includes(receiver.url)), 'the URL is never logged');
  const metrics = await fetch(gateway.url.replace(/\/v1$/, '/metrics')).then((answer) => answer.text());
  t.match(metrics, /modelgate_event_deliveries_total\{channel="webhook",outcome="retried"\} [3-9]/, 'retries counted');
  t.match(metrics, /modelgate_event_deliveries_total\{channel="webhook",outcome="delivered"\} 1/, 'the delivery counted');
});

t.test('a delivery left pending in the outbox when a gateway stops is made by the next start', async (t) => {
  const port = await freePort();
  const dataDir = testDataDir();
  const url = `http://127.0.0.1:${port}/hook`;
  const env = events({ MODELGATE_DATA_DIR: dataDir, MODELGATE_WEBHOOK_URL: url, MODELGATE_WEBHOOK_RETRY_DELAY: '1500' });
  const first = await startGateway(env);
  t.equal((await createKey(first.url, 'before restart')).status, 201);
  // The receiver is not there: the first attempt fails, the next is 1.5 s away.
  t.ok(await waitFor(() => first.logs.some((line) => JSON.stringify(line).includes('retried later'))), 'tried, failed, kept');
  const [pending] = (await call(first.url, '/admin/webhooks/wh_settings/deliveries?status=pending')).json.data;
  t.equal(pending?.attempts, 1);
  const replay = await call(first.url, `/admin/webhooks/wh_settings/deliveries/${pending.id}/replay`, { method: 'POST' });
  t.equal(replay.status, 409, 'a pending delivery is not replayed: it is being made');
  t.equal(replay.json.error.code, 'delivery_pending');
  await first.close();

  const receiver = await startReceiver(Buffer.from(SECRET, 'utf8'), port);
  t.teardown(() => receiver.close());
  const second = await startGateway(env);
  t.teardown(() => second.close());
  t.ok(await waitFor(() => receiver.accepted.length >= 1), 'made by the next start when due');
  t.match(receiver.accepted[0]!.json, { type: 'key.created', data: { name: 'before restart' } });
  const [made] = (await call(second.url, '/admin/webhooks/wh_settings/deliveries')).json.data;
  t.equal(made.id, pending.id, 'the same delivery');
  t.equal(made.attempts, 2);
  t.equal(receiver.accepted[0]!.headers['webhook-id'], made.event_id, 'under its event id');
});

t.test('an event queued at shutdown and due at once is delivered by the next start on its own', async (t) => {
  const port = await freePort();
  const dataDir = testDataDir();
  const url = `http://127.0.0.1:${port}/hook`;
  const first = await startGateway(events({ MODELGATE_DATA_DIR: dataDir, MODELGATE_WEBHOOK_URL: url, MODELGATE_WEBHOOK_RETRY_DELAY: '300' }));
  t.equal((await createKey(first.url, 'queued at stop')).status, 201);
  // Stopped at once: the event is written to the outbox as the gateway stops, if not before.
  await first.close();
  const receiver = await startReceiver(Buffer.from(SECRET, 'utf8'), port);
  t.teardown(() => receiver.close());
  const second = await startGateway(events({ MODELGATE_DATA_DIR: dataDir, MODELGATE_WEBHOOK_URL: url, MODELGATE_WEBHOOK_RETRY_DELAY: '300' }));
  t.teardown(() => second.close());
  t.ok(await waitFor(() => receiver.accepted.length >= 1), 'delivered by the second start');
  t.equal(receiver.accepted[0]!.json.data.name, 'queued at stop');
});

t.test('an alert e-mail reaches an SMTP server that was down when the alert fired', async (t) => {
  const port = await freePort();
  const gateway = await startGateway({
    ...PROTOCOL_ONLY,
    MODELGATE_EMAIL_ALERTS_ENABLED: 'true',
    MODELGATE_SMTP_HOST: '127.0.0.1',
    MODELGATE_SMTP_PORT: String(port),
    MODELGATE_SMTP_USERNAME: 'alerts',
    MODELGATE_SMTP_PASSWORD: 'smtp-password-never-logged',
    MODELGATE_EMAIL_SENDER: 'gateway@example.test',
    MODELGATE_EMAIL_RECIPIENTS: 'ops@example.test',
    MODELGATE_WEBHOOK_RETRY_DELAY: '100',
  });
  t.teardown(() => gateway.close());
  gateway.app.deps.events.emit('notify', { type: 'provider.down', data: { provider: 'anthropic', failures: 9, window_seconds: 60, last_error: 'server_error (HTTP 529)' } });
  t.ok(await waitFor(() => gateway.logs.some((line) => JSON.stringify(line).includes('retried later'))), 'the server is down: kept for a retry');
  const smtp = await startSmtp(port);
  t.teardown(() => smtp.close());
  t.ok(await waitFor(() => smtp.mails.length === 1), 'delivered once the server is up');
  const mail = smtp.mails[0]!.raw;
  t.match(mail, /Subject: \[modelgate\] .*anthropic/);
  t.match(mail, /To: ops@example.test/);
  t.notOk(gateway.logs.some((line) => JSON.stringify(line).includes('smtp-password-never-logged')), 'the password is never logged');
});

t.test('an endpoint answering 410 is disabled; API endpoints may not point at private addresses unless allowed', async (t) => {
  const receiver = await startReceiver(Buffer.from(SECRET, 'utf8'));
  t.teardown(() => receiver.close());
  receiver.answer = { status: 410 };
  const guarded = await startGateway(events());
  t.teardown(() => guarded.close());
  for (const url of [receiver.url, 'http://10.1.2.3/hook', 'http://[::1]:8080/', 'http://169.254.169.254/latest/meta-data', 'http://localhost:9/x']) {
    const refused = await call(guarded.url, '/admin/webhooks', { method: 'POST', body: JSON.stringify({ url }) });
    t.equal(refused.status, 400, url);
    t.equal(refused.json.error.param, 'url');
    t.match(refused.json.error.message, /MODELGATE_WEBHOOK_ALLOW_PRIVATE/);
  }

  const open = await startGateway(events({ MODELGATE_WEBHOOK_ALLOW_PRIVATE: 'true' }));
  t.teardown(() => open.close());
  const created = await call(open.url, '/admin/webhooks', { method: 'POST', body: JSON.stringify({ url: receiver.url, event_types: ['key.created', 'key.revoked'] }) });
  t.equal(created.status, 201);
  const id = created.json.id;
  await createKey(open.url, 'gone');
  t.ok(
    await waitFor(() => receiver.requests.length === 1),
    'tried once',
  );
  let endpoint: any;
  t.ok(
    await waitFor(() => {
      void call(open.url, `/admin/webhooks/${id}`).then((answer) => (endpoint = answer.json));
      return endpoint?.enabled === false;
    }),
    'disabled',
  );
  t.equal(endpoint.disabled_reason, 'gone');
  await createKey(open.url, 'after');
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.equal(receiver.requests.length, 1, 'a disabled endpoint gets nothing more');
  const enabled = await call(open.url, `/admin/webhooks/${id}`, { method: 'PATCH', body: JSON.stringify({ enabled: true }) });
  t.equal(enabled.json.enabled, true, 'an admin enables it again');
});

t.test('no alert storm: 1,000 requests refused by a spent budget and a rate limit send one budget.exceeded and nothing else', async (t) => {
  const receiver = await startReceiver(Buffer.from(SECRET, 'utf8'));
  t.teardown(() => receiver.close());
  const upstream = await startFakeOpenAI();
  t.teardown(() => upstream.close());
  upstream.fallback = openAIResponder();
  const gateway = await startGateway(
    events({
      OPENAI_API_KEY: PROVIDER_KEYS.openai,
      OPENAI_BASE_URL: `${upstream.url}/v1`,
      MODELGATE_WEBHOOK_URL: receiver.url,
      MODELGATE_DAILY_COST_LIMIT: '0',
      MODELGATE_RATE_LIMIT_RPM: '600',
      MODELGATE_RATE_LIMIT_BURST: '1',
    }),
  );
  t.teardown(() => gateway.close());
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
  const statuses = new Map<number, number>();
  const kinds = new Set<string>();
  for (let sent = 0; sent < 1000; sent += 50) {
    const answers = await Promise.all(Array.from({ length: 50 }, () => call(gateway.url, '/chat/completions', { body })));
    for (const answer of answers) {
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      kinds.add(answer.json?.error?.param);
    }
  }
  t.equal(statuses.get(429), 1000, 'every request refused (the budget, then the rate limit)');
  t.equal(upstream.requests.length, 0, 'none reached the provider');
  t.same([...kinds].sort(), ['daily_cost_limit', 'requests_per_minute'], 'refused by both');
  t.ok(await waitFor(() => receiver.accepted.length >= 1), 'the exceeded budget is said');
  await new Promise((resolve) => setTimeout(resolve, 1000));
  t.same(
    receiver.accepted.map((received) => received.json.type),
    ['budget.exceeded'],
    'once; refusals of the rate limit wait for their minute to be summed',
  );
});

t.test('incomplete settings stop the start with the setting named', async (t) => {
  for (const [env, named] of [
    [{ MODELGATE_WEBHOOKS_ENABLED: 'true' }, 'MODELGATE_WEBHOOK_SECRET'],
    [{ MODELGATE_EMAIL_ALERTS_ENABLED: 'true', MODELGATE_SMTP_HOST: 'mail.test', MODELGATE_EMAIL_SENDER: 'a@b.test' }, 'MODELGATE_EMAIL_RECIPIENTS'],
    [{ MODELGATE_EMAIL_ALERTS_ENABLED: 'true', MODELGATE_SMTP_HOST: 'mail.test', MODELGATE_EMAIL_SENDER: 'a@b.test', MODELGATE_EMAIL_RECIPIENTS: 'x@y.test\r\nBcc: z@evil.test' }, 'not an e-mail address'],
    [{ MODELGATE_CHAT_ALERTS_ENABLED: 'true' }, 'MODELGATE_CHAT_WEBHOOK_URL'],
    [{ MODELGATE_WEBHOOK_ALERTS_ENABLED: 'true', MODELGATE_WEBHOOK_ALERT_URL: 'http://alerts.test/', MODELGATE_WEBHOOK_SECRET: 'x'.repeat(20), MODELGATE_WEBHOOK_ALERT_HEADERS: '{"webhook-signature":"forged"}' }, 'set by the gateway'],
    [{ MODELGATE_WEBHOOKS_ENABLED: 'true', MODELGATE_WEBHOOK_SECRET: 'x'.repeat(20), MODELGATE_WEBHOOK_EVENTS: 'key.created,key.nope' }, 'key.nope'],
    [{ MODELGATE_WEBHOOKS_ENABLED: 'true', MODELGATE_WEBHOOK_SECRET: 'whsec_c2hvcnQga2V5' }, 'a 9-byte key'],
    [{ MODELGATE_WEBHOOKS_ENABLED: 'true', MODELGATE_WEBHOOK_SECRET: 'x'.repeat(20), MODELGATE_WEBHOOK_PREVIOUS_SECRETS: 'short' }, 'MODELGATE_WEBHOOK_PREVIOUS_SECRETS'],
    [{ MODELGATE_WEBHOOK_ALERTS_ENABLED: 'true', MODELGATE_WEBHOOK_ALERT_URL: 'http://alerts.test/', MODELGATE_WEBHOOK_SECRET: 'x'.repeat(20), MODELGATE_WEBHOOK_ALERT_HEADERS: '{"X-Token":"a\\u0007b"}' }, 'control character'],
    [{ MODELGATE_CHAT_ALERTS_ENABLED: 'true', MODELGATE_CHAT_WEBHOOK_URL: 'http://exa mple/' }, 'not a valid URL'],
  ] as const) {
    await t.rejects(startGateway({ ...PROTOCOL_ONLY, ...env }), new RegExp(named), named);
  }
  // The per-environment variant turns webhooks on in production only.
  await t.rejects(startGateway({ ...PROTOCOL_ONLY, MODELGATE_ENV: 'prod', MODELGATE_PROD_WEBHOOKS_ENABLED: 'true' }), /MODELGATE_WEBHOOK_SECRET: required/, 'MODELGATE_PROD_WEBHOOKS_ENABLED');
  const staging = await startGateway({ ...PROTOCOL_ONLY, MODELGATE_ENV: 'staging', MODELGATE_PROD_WEBHOOKS_ENABLED: 'true' });
  await staging.close();
  // Malformed JSON in a secret setting: the parser's message would quote the token.
  const refused = await startGateway({ ...PROTOCOL_ONLY, MODELGATE_WEBHOOK_ALERT_HEADERS: '{"Authorization": Bearer sk-live-token}' }).then(
    () => undefined,
    (error: Error) => error.message,
  );
  t.match(refused, /MODELGATE_WEBHOOK_ALERT_HEADERS: must be a JSON object \(it is not valid JSON\)/);
  t.notOk(refused?.includes('sk-live'), 'without quoting it');
});
