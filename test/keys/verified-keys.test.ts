// The key cache on a real database: a verified key costs one lookup, then none; a token that is not
// `uc_`-shaped (or too long) never reaches the database; unknown keys are cached as unknown, in a
// bounded cache; a flood of distinct random keys reaches the database a bounded number at a time
// and the excess is refused with 503 rather than queued without end; a change drops what is cached.
import t, { type Test } from 'tap';
import { pino } from 'pino';
import { openTestStore } from '../helpers/database.js';
import { KeyRows } from '../../plugins/keys/key-rows.js';
import { Pepper, generateSecret, newKeyId, prefixOf } from '../../plugins/keys/secrets.js';
import { VerifiedKeys } from '../../plugins/keys/verified-keys.js';

async function setUp(t: Test, subscribed = false) {
  const store = await openTestStore(t, 'sqlite', { migrated: true });
  const rows = new KeyRows(store.db, store.engine);
  const pepper = new Pepper('pepper-0123456789abcdef0123456789abcdef');
  const used: string[] = [];
  const keys = new VerifiedKeys({ rows, pepper, logger: pino({ level: 'silent' }), subscribed: () => subscribed, used: (id) => used.push(id) });
  const add = async (extra: { expiresAt?: number } = {}) => {
    const secret = generateSecret();
    const row = await rows.insert({ id: newKeyId(), name: 'k', owner: 'o', prefix: prefixOf(secret), hash: pepper.hash(secret), admin: false, limits: null, allowedModels: null, expiresAt: extra.expiresAt ?? null, now: Date.now() });
    return { secret, row };
  };
  return { store, rows, keys, add, used };
}

t.test('a verified key is looked up once, then answered from memory', async (t) => {
  const { keys, add, used } = await setUp(t, true);
  const { secret, row } = await add();
  for (let i = 0; i < 100; i++) t.match(await keys.verify(secret), { keyId: row.id });
  t.equal(keys.reads, 1, 'one database lookup for 100 requests');
  t.equal(used.length, 100, 'each use is noted for the last-used writer');
});

t.test('without a change channel an entry is trusted for a second at most', async (t) => {
  const { keys, add, rows } = await setUp(t, false);
  const { secret, row } = await add();
  t.ok(await keys.verify(secret));
  await rows.revoke(row.id, Date.now()); // on "another replica": nothing tells this cache
  const started = Date.now();
  while (await keys.verify(secret)) await new Promise((resolve) => setTimeout(resolve, 20));
  const took = Date.now() - started;
  t.ok(took <= 1000, `the revocation was seen after ${took} ms`);
});

t.test('malformed tokens never reach the database', async (t) => {
  const { keys } = await setUp(t);
  for (const token of ['', 'uc_', 'sk-abc', `uc_${'a'.repeat(42)}`, `uc_${'a'.repeat(44)}`, `uc_${'a'.repeat(42)}!`, `uc_${'a'.repeat(100_000)}`, `UC_${'a'.repeat(43)}`]) {
    t.equal(await keys.verify(token), undefined);
  }
  t.equal(keys.reads, 0);
});

t.test('unknown keys are cached as unknown, in a bounded cache', async (t) => {
  const { keys } = await setUp(t, true);
  const unknown = generateSecret();
  for (let i = 0; i < 50; i++) t.equal(await keys.verify(unknown), undefined);
  t.equal(keys.reads, 1, 'the same unknown key is looked up once');
  for (let i = 0; i < 12_000; i++) await keys.verify(generateSecret());
  t.ok(keys.size.unknown <= 10_000, `the negative cache holds ${keys.size.unknown} entries, at most 10000`);
});

t.test('a flood of distinct random keys reaches the database a few at a time; the excess is refused', async (t) => {
  const { keys, store } = await setUp(t);
  // Count the lookups in flight by watching the real database calls.
  let inFlight = 0;
  let most = 0;
  const rows = (keys as unknown as { options: { rows: KeyRows } }).options.rows;
  const byHash = rows.byHash.bind(rows);
  rows.byHash = async (hash) => {
    most = Math.max(most, ++inFlight);
    await new Promise((resolve) => setTimeout(resolve, 5));
    try {
      return await byHash(hash);
    } finally {
      inFlight--;
    }
  };
  const results = await Promise.allSettled(Array.from({ length: 1000 }, () => keys.verify(generateSecret())));
  const refused = results.filter((r) => r.status === 'rejected');
  t.ok(most <= 8, `at most 8 lookups at once (saw ${most})`);
  t.ok(refused.length > 0, `${refused.length} of 1000 were refused rather than queued`);
  t.match((refused[0] as PromiseRejectedResult).reason, { status: 503, headers: { 'retry-after': '1' } });
  t.ok(keys.reads <= 8 + 256, `${keys.reads} reached the database`);
  t.ok(store);
});

t.test('a change drops the cached entry of that key; an older version does not', async (t) => {
  const { keys, add, rows } = await setUp(t, true);
  const { secret, row } = await add();
  t.ok(await keys.verify(secret));
  const revoked = (await rows.revoke(row.id, Date.now()))!;
  keys.invalidate(row.id, row.version);
  t.ok(await keys.verify(secret), 'a message about the version already cached changes nothing');
  keys.invalidate(row.id, revoked.version);
  t.equal(await keys.verify(secret), undefined, 'the new version is read');
});

t.test('an expired key is returned with its expiry (the auth step refuses it); the old secret carries its grace end', async (t) => {
  const { keys, add, rows } = await setUp(t, true);
  const { secret, row } = await add({ expiresAt: Date.now() + 60_000 });
  t.match(await keys.verify(secret), { expiresAt: row.expires_at });
  const next = generateSecret();
  const pepper = new Pepper('pepper-0123456789abcdef0123456789abcdef');
  const graceEnd = Date.now() + 5000;
  await rows.rotate(row.id, { hash: pepper.hash(next), prefix: prefixOf(next) }, graceEnd, undefined, Date.now());
  keys.invalidate(row.id);
  t.match(await keys.verify(secret), { keyId: row.id, expiresAt: graceEnd });
  t.match(await keys.verify(next), { keyId: row.id, expiresAt: row.expires_at });
});

t.test('a database that fails a lookup is 503 store_unavailable, never a 401 and never the secret', async (t) => {
  const { keys, add, store } = await setUp(t, true);
  const { secret } = await add();
  t.ok(await keys.verify(secret), 'cached while the database answers');
  await store.close();
  t.ok(await keys.verify(secret), 'a cached key still works without the database');
  const other = generateSecret();
  const error = await keys.verify(other).then(
    () => undefined,
    (thrown: unknown) => thrown as { status: number; code: string; message: string },
  );
  t.match(error, { status: 503, code: 'store_unavailable' });
  t.notMatch(JSON.stringify(error) + String(error?.message), other.slice(3));
});

t.end();
