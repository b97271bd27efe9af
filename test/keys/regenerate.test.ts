// Regenerate on both engines: the id, limits and owner stay; the new secret works at once; the old
// one works until the end of its grace period and then answers `API key expired`; a retry with the
// same Idempotency-Key rotates nothing and answers the same secret; with rotation on, keys expire
// after the interval and are listed as expiring.
import t from 'tap';
import { startGateway, call, type TestGateway } from '../helpers/gateway.js';
import { ENGINES, engineEnv } from '../helpers/database.js';

const GRACE_S = 2;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const engine of ENGINES) {
  t.test(`on ${engine}`, async (t) => {
    const gateway: TestGateway = await startGateway({ ...engineEnv(engine), MODELGATE_API_KEY_ROTATION_GRACE: String(GRACE_S) });
    t.teardown(() => gateway.close());
    const admin = (path: string, init: Parameters<typeof call>[2] = {}) => call(gateway.url, path, init);
    const models = async (key: string) => (await call(gateway.url, '/models', { key })).json?.error?.message ?? 'ok';

    const created = (await admin('/admin/keys', { body: JSON.stringify({ name: 'app', owner: 'acme', limits: { daily_cost_limit: 3 } }) })).json;

    t.test('the old secret works through its grace period, then API key expired', async (t) => {
      const started = Date.now();
      const regenerated = await admin(`/admin/keys/${created.id}/regenerate`, { method: 'POST' });
      t.equal(regenerated.status, 200);
      const fresh = regenerated.json;
      t.equal(fresh.id, created.id, 'the same id');
      t.same([fresh.owner, fresh.limits], ['acme', { daily_cost_limit: 3 }], 'the same owner and limits');
      t.not(fresh.key, created.key, 'a new secret');
      t.not(fresh.prefix, created.prefix, 'and its prefix');
      const graceEnd = Date.parse(fresh.previous_key_expires_at);
      t.ok(Math.abs(graceEnd - (started + GRACE_S * 1000)) < 1000, 'the grace ends MODELGATE_API_KEY_ROTATION_GRACE from now');
      t.equal(await models(fresh.key), 'ok', 'the new secret works at once');
      t.equal(await models(created.key), 'ok', 'the old one still works');
      await sleep(graceEnd - Date.now() - 400);
      t.equal(await models(created.key), 'ok', 'just before the end of its grace');
      await sleep(graceEnd - Date.now() + 10);
      t.equal(await models(created.key), 'API key expired', 'after it');
      t.equal(await models(fresh.key), 'ok', 'the new one is unaffected');
      created.key = fresh.key;
    });

    t.test('a retried regenerate with the same Idempotency-Key rotates once', async (t) => {
      const first = await admin(`/admin/keys/${created.id}/regenerate`, { method: 'POST', headers: { 'idempotency-key': 'rotate-2026-11' } });
      const [second, third] = await Promise.all([
        admin(`/admin/keys/${created.id}/regenerate`, { method: 'POST', headers: { 'idempotency-key': 'rotate-2026-11' } }),
        admin(`/admin/keys/${created.id}/regenerate`, { method: 'POST', headers: { 'idempotency-key': 'rotate-2026-11' } }),
      ]);
      t.equal(first.status, 200);
      t.same([second.status, third.status], [200, 200]);
      t.equal(second.json.key, first.json.key, 'the same secret is answered again');
      t.equal(third.json.key, first.json.key);
      t.equal(second.json.previous_key_expires_at, first.json.previous_key_expires_at);
      t.equal(await models(first.json.key), 'ok');
      t.equal(await models(created.key), 'ok', 'the secret before it is in its grace, not rotated away twice');
      const other = await admin(`/admin/keys/${created.id}/regenerate`, { method: 'POST', headers: { 'idempotency-key': 'rotate-2026-12' } });
      t.not(other.json.key, first.json.key, 'a new Idempotency-Key rotates again');
      const stale = await admin(`/admin/keys/${created.id}/regenerate`, { method: 'POST', headers: { 'idempotency-key': 'rotate-2026-11' } });
      t.equal(stale.status, 409, 'the first key, now that its secret was replaced, cannot be answered again — nor rotate again');
      t.equal(stale.json.error.code, 'idempotency_key_used');
      t.notMatch(stale.text, first.json.key);
      const { db } = gateway.app.deps.store();
      const kept = await db.selectFrom('api_key_idempotency').selectAll().execute();
      t.notOk(JSON.stringify(kept).includes(first.json.key.slice(3)), 'the secret is not stored in the clear');
      t.equal(await models(other.json.key), 'ok');
    });

    t.test('a revoked key cannot be regenerated', async (t) => {
      t.equal((await admin(`/admin/keys/${created.id}`, { method: 'DELETE' })).json.status, 'revoked');
      const answer = await admin(`/admin/keys/${created.id}/regenerate`, { method: 'POST' });
      t.equal(answer.status, 409);
      t.equal(answer.json.error.code, 'key_revoked');
    });
  });
}

t.test('with rotation on, keys expire after the interval and show as expiring', async (t) => {
  const gateway = await startGateway({ MODELGATE_API_KEY_ROTATION_ENABLED: 'true', MODELGATE_API_KEY_ROTATION_INTERVAL: '5' });
  t.teardown(() => gateway.close());
  const now = Date.now();
  const soon = (await call(gateway.url, '/admin/keys', { body: JSON.stringify({ name: 'rotated' }) })).json;
  t.ok(Math.abs(Date.parse(soon.expires_at) - (now + 5 * 86_400_000)) < 5000, 'expires the interval after its creation');
  const later = (await call(gateway.url, '/admin/keys', { body: JSON.stringify({ name: 'asked-for-later', expires_at: '2999-01-01T00:00:00Z' }) })).json;
  t.ok(Date.parse(later.expires_at) <= Date.now() + 5 * 86_400_000, 'an expiry past the interval is capped to it');
  const patched = (await call(gateway.url, `/admin/keys/${soon.id}`, { method: 'PATCH', body: JSON.stringify({ expires_at: new Date(now + 86_400_000 * 30).toISOString() }) })).json;
  t.ok(Date.parse(patched.expires_at) <= Date.now() + 5 * 86_400_000, 'a change cannot push it past the interval either');
  const within7 = (await call(gateway.url, '/admin/keys?expiring_within=7d')).json;
  t.same(within7.data.map((key: { id: string }) => key.id).sort(), [soon.id, later.id].sort(), 'both expire within 7 days');
  t.same((await call(gateway.url, '/admin/keys?expiring_within=1d')).json.data, [], 'neither within a day');
  await gateway.app.deps.keyStats.refresh();
  t.equal(gateway.app.deps.keyStats.expiringSoon(), 2, 'the count the metrics read: keys expiring within 7 days');
  await call(gateway.url, `/admin/keys/${later.id}`, { method: 'DELETE' });
  await gateway.app.deps.keyStats.refresh();
  t.equal(gateway.app.deps.keyStats.expiringSoon(), 1, 'a revoked key is not counted');
});

t.end();
