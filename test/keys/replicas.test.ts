// Three gateways sharing PostgreSQL and Redis (MODELGATE_STORE=redis): a key created on one works on
// all; a revocation, a change of expiry and a regenerate's end of grace made on one are seen by the
// other two within a second, measured; and the same without Redis (each replica trusts its cache
// for under a second). Keys in use are answered from memory, not from the database per request.
import t, { type Test } from 'tap';
import { startGateway, call, type TestGateway } from '../helpers/gateway.js';
import { postgresEnv, testSchema } from '../helpers/database.js';
import { redisEnv, testPrefix, flushPrefix } from '../helpers/redis.js';
import { startPrivateRedis } from '../helpers/private-redis.js';
import type { VerifiedKeys } from '../../plugins/keys/verified-keys.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function replicas(t: Test, env: Record<string, string>): Promise<TestGateway[]> {
  const gateways: TestGateway[] = [];
  for (let i = 0; i < 3; i++) gateways.push(await startGateway(env));
  t.teardown(async () => {
    for (const gateway of gateways) await gateway.close();
  });
  return gateways;
}

const status = async (gateway: TestGateway, key: string) => {
  const answer = await call(gateway.url, '/models', { key });
  return answer.status === 200 ? 'ok' : (answer.json?.error?.message as string);
};

/** ms until every gateway answers `expected` for `key`, polled every 10 ms; gives up after 5 s. */
async function seenWithin(gateways: TestGateway[], key: string, expected: string, since: number): Promise<number> {
  const done = new Set<number>();
  while (done.size < gateways.length && Date.now() - since < 5000) {
    for (const [i, gateway] of gateways.entries()) if (!done.has(i) && (await status(gateway, key)) === expected) done.add(i);
    if (done.size < gateways.length) await sleep(10);
  }
  return done.size === gateways.length ? Date.now() - since : Number.POSITIVE_INFINITY;
}

const cacheOf = (gateway: TestGateway) => gateway.app.deps.keyStores[0] as VerifiedKeys;

for (const shared of ['redis', 'none'] as const) {
  t.test(`three replicas on PostgreSQL, invalidated ${shared === 'redis' ? 'through Redis pub/sub' : 'by the short TTL (no Redis)'}`, async (t) => {
    const prefix = testPrefix();
    t.teardown(() => flushPrefix(prefix));
    const env = { ...postgresEnv(testSchema()), ...(shared === 'redis' ? { ...redisEnv(prefix), MODELGATE_STORE: 'redis' } : {}), MODELGATE_RATE_LIMITING_ENABLED: 'false' };
    const [a, b, c] = await replicas(t, env);
    const all = [a!, b!, c!];
    const created = (await call(a!.url, '/admin/keys', { body: JSON.stringify({ name: 'shared' }) })).json;
    for (const gateway of all) t.equal(await status(gateway, created.key), 'ok', 'a new key works on every replica');

    if (shared === 'redis') {
      const before = all.map((gateway) => cacheOf(gateway).reads);
      for (let i = 0; i < 30; i++) for (const gateway of all) await status(gateway, created.key);
      t.same(all.map((gateway) => cacheOf(gateway).reads), before, 'while subscribed, 90 requests read no key from the database');
    }

    const expiresAt = Date.now() + 60_000;
    const changedAt = Date.now();
    await call(b!.url, `/admin/keys/${created.id}`, { method: 'PATCH', body: JSON.stringify({ expires_at: new Date(Date.now() - 1000).toISOString() }) });
    const expiredIn = await seenWithin(all, created.key, 'API key expired', changedAt);
    t.ok(expiredIn <= 1000, `an expiry set on one replica was applied by all three in ${expiredIn} ms`);
    await call(b!.url, `/admin/keys/${created.id}`, { method: 'PATCH', body: JSON.stringify({ expires_at: new Date(expiresAt).toISOString() }) });
    t.ok((await seenWithin(all, created.key, 'ok', Date.now())) <= 1000, 'and lifted again');

    const regenerate = (on: TestGateway) => call(on.url, `/admin/keys/${created.id}/regenerate`, { method: 'POST', headers: { 'idempotency-key': `once-${shared}` } });
    const first = await regenerate(a!);
    const retried = await regenerate(b!);
    t.equal(retried.json.key, first.json.key, 'a retry on another replica answers the same secret: no second rotation');
    for (const gateway of all) t.equal(await status(gateway, first.json.key), 'ok', 'the new secret works everywhere at once');
    for (const gateway of all) t.equal(await status(gateway, created.key), 'ok', 'and the old one in its grace');

    const revokedAt = Date.now();
    await call(c!.url, `/admin/keys/${created.id}`, { method: 'DELETE' });
    const revokedIn = await seenWithin(all, first.json.key, 'Invalid API key', revokedAt);
    const graceRevokedIn = await seenWithin(all, created.key, 'Invalid API key', revokedAt);
    t.ok(graceRevokedIn <= 1000, `the secret in its grace is revoked with the key (${graceRevokedIn} ms)`);
    t.ok(revokedIn <= 1000, `a revocation on one replica was applied by all three in ${revokedIn} ms`);
    t.comment(`propagation (${shared}): expiry ${expiredIn} ms, revocation ${revokedIn} ms`);
  });
}

t.test('replicas that lose Redis fall back to the short TTL and still see changes within a second', async (t) => {
  const redis = await startPrivateRedis();
  let stopped = false;
  t.teardown(async () => {
    if (!stopped) await redis.stop();
  });
  const env = { ...postgresEnv(testSchema()), REDIS_HOST: '127.0.0.1', REDIS_PORT: String(redis.port), REDIS_KEY_PREFIX: testPrefix(), MODELGATE_STORE: 'redis', MODELGATE_RATE_LIMITING_ENABLED: 'false' };
  const [a, b] = await replicas(t, env);
  const created = (await call(a!.url, '/admin/keys', { body: JSON.stringify({ name: 'k' }) })).json;
  t.equal(await status(b!, created.key), 'ok');
  const subscribed = () => (cacheOf(b!) as unknown as { options: { subscribed(): boolean } }).options.subscribed();
  t.ok(subscribed(), 'subscribed at first');
  await redis.stop();
  stopped = true;
  for (let i = 0; i < 100 && subscribed(); i++) await sleep(10);
  t.notOk(subscribed(), 'no longer subscribed once Redis is gone');
  const revokedAt = Date.now();
  const revoked = await call(a!.url, `/admin/keys/${created.id}`, { method: 'DELETE' });
  t.equal(revoked.status, 200, 'a change is made even though it cannot be published');
  const seen = await seenWithin([b!], created.key, 'Invalid API key', revokedAt);
  t.ok(seen <= 1000, `the other replica saw it in ${seen} ms without the channel`);
  t.ok(a!.logs.some((line) => line.msg === 'keys: a key change could not be told to the other replicas through Redis; their caches drop it within a minute'), 'the failed publish is logged');
});

t.end();
