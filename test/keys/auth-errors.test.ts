// Keys made through the admin API, on one gateway (SQLite, no Redis): each way a key is refused, the
// expiry at its boundary, what a non-admin key may not do, and that no answer or log line ever
// carries a secret (other than the one just issued, once) or its hash. The OpenAI SDK sees every
// 401 as its AuthenticationError.
import t from 'tap';
import { createHmac } from 'node:crypto';
import OpenAI from 'openai';
import { startGateway, call, GATEWAY_KEY, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway;
const issued: string[] = [];
const responses: string[] = [];

t.before(async () => {
  gateway = await startGateway({ MODELGATE_API_KEY_PEPPER: 'pepper-for-tests-0123456789abcdef0123' });
});
t.after(() => gateway.close());

/** An admin call; its answer's text is kept for the secrecy check at the end. */
async function admin(path: string, init: Parameters<typeof call>[2] = {}) {
  const answer = await call(gateway.url, path, init);
  responses.push(answer.text);
  return answer;
}

async function createKey(body: Record<string, unknown>) {
  const created = await admin('/admin/keys', { body: JSON.stringify(body) });
  if (created.status !== 201) throw new Error(`create answered ${created.status}: ${created.text}`);
  issued.push(created.json.key);
  return created.json as { id: string; key: string; prefix: string };
}

/** Whether the OpenAI SDK, with this key, raises its AuthenticationError (and not another error). */
async function sdkRefuses(key: string): Promise<boolean> {
  const sdk = new OpenAI({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
  return sdk.models.list().then(
    () => false,
    (error: unknown) => error instanceof OpenAI.AuthenticationError,
  );
}

const models = (key: string | null) => call(gateway.url, '/models', { key });

t.test('a created key works, is shown once, and is stored under its prefix only', async (t) => {
  const key = await createKey({ name: 'app', owner: 'acme' });
  t.match(key.key, /^uc_[A-Za-z0-9_-]{43}$/, 'uc_ + 32 random bytes');
  t.equal(key.prefix, key.key.slice(0, 11));
  t.equal((await models(key.key)).status, 200);
  const read = await admin(`/admin/keys/${key.id}`);
  t.notOk('key' in read.json, 'the secret is never shown again');
  t.equal(read.json.owner, 'acme');
  const row = await gateway.app.deps.store().db.selectFrom('api_keys').selectAll().where('id', '=', key.id).executeTakeFirstOrThrow();
  t.not(row.hash, key.key);
  t.notMatch(JSON.stringify(row), key.key.slice(11), 'the database holds no part of the secret past its prefix');
});

t.test('missing, malformed, unknown and revoked keys are Invalid API key; the SDK raises AuthenticationError', async (t) => {
  const key = await createKey({ name: 'to-revoke' });
  t.equal((await admin(`/admin/keys/${key.id}`, { method: 'DELETE' })).json.status, 'revoked');
  const cases: Record<string, string | null> = {
    missing: null,
    'not uc_-shaped': 'sk-0123456789',
    'too long': `${key.key}${'A'.repeat(5000)}`,
    'one character off': `${key.key.slice(0, -1)}${key.key.endsWith('A') ? 'B' : 'A'}`,
    unknown: 'uc_' + 'x'.repeat(43),
    revoked: key.key,
  };
  for (const [what, secret] of Object.entries(cases)) {
    const answer = await models(secret);
    t.equal(answer.status, 401, what);
    t.equal(answer.json.error.message, 'Invalid API key', what);
    t.equal(answer.json.error.code, 'invalid_api_key', what);
    if (secret === null) continue;
    t.ok(await sdkRefuses(secret), `${what}: the SDK's AuthenticationError`);
  }
});

t.test('an expired key is API key expired, from the instant of its expiry', async (t) => {
  const expiresAt = Date.now() + 1500;
  const key = await createKey({ name: 'short-lived', expires_at: new Date(expiresAt).toISOString() });
  t.equal((await models(key.key)).status, 200, 'before its expiry');
  while (Date.now() < expiresAt - 300) {
    t.equal((await models(key.key)).status, 200, 'still before');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now())));
  const after = await models(key.key);
  t.equal(after.status, 401);
  t.equal(after.json.error.message, 'API key expired');
  t.equal(after.json.error.code, 'api_key_expired');
  t.notMatch(after.text, key.key, 'the expired key is not echoed');
  t.ok(await sdkRefuses(key.key), "the SDK's AuthenticationError");
  const extended = await admin(`/admin/keys/${key.id}`, { method: 'PATCH', body: JSON.stringify({ expires_at: null }) });
  t.equal(extended.json.expires_at, null);
  t.equal((await models(key.key)).status, 200, 'an expiry lifted applies at once on this gateway');
});

t.test('a non-admin key is refused on every admin route; an admin key it made is not', async (t) => {
  const user = await createKey({ name: 'user' });
  const routes: Array<[string, string, string?]> = [
    ['POST', '/admin/keys', '{"name":"x"}'],
    ['GET', '/admin/keys'],
    ['GET', `/admin/keys/${user.id}`],
    ['PATCH', `/admin/keys/${user.id}`, '{"name":"x"}'],
    ['POST', `/admin/keys/${user.id}/regenerate`],
    ['DELETE', `/admin/keys/${user.id}`],
  ];
  for (const [method, path, body] of routes) {
    const answer = await call(gateway.url, path, { method, body, key: user.key });
    t.equal(answer.status, 403, `${method} ${path}`);
    t.equal(answer.json.error.code, 'admin_required');
  }
  const operator = await createKey({ name: 'operator', admin: true });
  t.equal((await call(gateway.url, '/admin/keys', { key: operator.key })).status, 200, 'a key created as admin is one');
});

t.test('bodies are validated and bounded; an unknown id is 404', async (t) => {
  const bad: Array<[unknown, string | null]> = [
    [{}, 'name'],
    [{ name: 'x'.repeat(101) }, 'name'],
    [{ name: 'x', limits: { requests_per_minute: 1.5 } }, 'limits.requests_per_minute'],
    [{ name: 'x', limits: { rpm: 5 } }, 'limits.rpm'],
    [{ name: 'x', allowed_models: Array.from({ length: 101 }, (_, i) => `m${i}`) }, 'allowed_models'],
    [{ name: 'x', expires_at: 'tomorrow' }, 'expires_at'],
    [{ name: 'x', expires_at: '2026-02-31T00:00:00Z' }, 'expires_at'],
    [{ name: 'x', secret: 'uc_mine' }, 'secret'],
  ];
  for (const [body, param] of bad) {
    const answer = await admin('/admin/keys', { body: JSON.stringify(body) });
    t.equal(answer.status, 400, JSON.stringify(body).slice(0, 60));
    t.equal(answer.json.error.param, param);
  }
  t.equal((await admin('/admin/keys/key_unknown')).status, 404);
  t.equal((await admin('/admin/keys/not-a-key-id')).json.error.code, 'key_not_found');
  t.equal((await admin('/admin/keys/key_unknown', { method: 'PATCH', body: '{"name":"y"}' })).status, 404);
  t.equal((await admin('/admin/keys?limit=0')).json.error.param, 'limit');
  t.equal((await admin('/admin/keys?expiring_within=soon')).json.error.param, 'expiring_within');
});

t.test('a key carries its owner, limits and allowed models to the request (the principal)', async (t) => {
  const key = await createKey({ name: 'limited', owner: 'team-a', limits: { requests_per_minute: 7, daily_cost_limit: 2.5 }, allowed_models: ['gpt-4o-mini'] });
  const [verify] = gateway.app.deps.keyStores;
  const record = await verify!.verify(key.key);
  t.match(record, { keyId: key.id, tenant: 'team-a', admin: false, limits: { requests_per_minute: 7, daily_cost_limit: 2.5 }, allowedModels: ['gpt-4o-mini'] });
});

t.test('last-used times are written off the request path, at most once a minute', async (t) => {
  const key = await createKey({ name: 'used' });
  t.equal((await admin(`/admin/keys/${key.id}`)).json.last_used_at, null);
  for (let i = 0; i < 5; i++) await models(key.key);
  const { db } = gateway.app.deps.store();
  t.equal((await db.selectFrom('api_keys').select('last_used_at').where('id', '=', key.id).executeTakeFirstOrThrow()).last_used_at, null, 'not written by the requests themselves');
  const plugin = gateway.app.plugins.find((p) => p.name === 'keys')!;
  await plugin.close!(); // flushes what is pending, as a shutdown does
  const first = (await admin(`/admin/keys/${key.id}`)).json.last_used_at;
  t.ok(first, 'written by the flush');
  t.ok(Math.abs(Date.parse(first) - Date.now()) < 10_000);
});

t.test('no answer and no log line carries a secret (other than its one showing) or a hash', async (t) => {
  const pepper = 'pepper-for-tests-0123456789abcdef0123';
  const logs = JSON.stringify(gateway.logs);
  for (const secret of [...issued, GATEWAY_KEY]) {
    const hash = createHmac('sha256', pepper).update(secret).digest('hex');
    t.notMatch(logs, secret.slice(11), 'no secret in the logs');
    t.notMatch(logs, hash, 'no hash in the logs');
    const shown = responses.filter((text) => text.includes(secret.slice(11)));
    t.ok(shown.length <= 1, 'a secret is in one answer at most: its creation');
    t.notOk(responses.some((text) => text.includes(hash)), 'no hash in any answer');
  }
  t.ok(gateway.logs.some((line) => line.msg === 'keys: key created'), 'the creations were logged (without secrets)');
});

t.end();
