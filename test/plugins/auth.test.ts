import t from 'tap';
import { auth, bearerToken, bootstrapKeyStore, secretMatcher } from '../../plugins/auth.js';
import type { KeyStore } from '../../core/key-store.js';
import type { RequestContext } from '../../core/context.js';
import type { PluginDeps } from '../../core/pipeline.js';

const KEY = 'uc_bootstrap_secret';

async function step(keyStores: KeyStore[] = []) {
  const plugin = await auth.create({ MODELGATE_API_KEY: KEY }, { keyStores } as unknown as PluginDeps);
  return plugin.step!;
}

async function run(authorization: string | undefined, keyStores?: KeyStore[]) {
  const ctx = { headers: authorization === undefined ? {} : { authorization } } as RequestContext;
  let passed = false;
  await (await step(keyStores)).handle(ctx, async () => {
    passed = true;
  });
  return { ctx, passed };
}

t.test('the bootstrap key passes and makes an admin principal', async (t) => {
  const { ctx, passed } = await run(`Bearer ${KEY}`);
  t.ok(passed);
  t.same(ctx.principal, { keyId: 'bootstrap', tenant: 'default', admin: true });
  t.ok((await run(`bearer   ${KEY}`)).passed, 'the scheme is case-insensitive, extra spaces tolerated');
});

t.test('missing, malformed and unknown keys are 401 Invalid API key with www-authenticate', async (t) => {
  for (const header of [undefined, '', KEY, `Basic ${KEY}`, 'Bearer', `Bearer ${KEY}x`, `Bearer ${KEY.slice(0, -1)}`, `Bearer ${KEY} extra`]) {
    await t.rejects(run(header), { status: 401, message: 'Invalid API key', headers: { 'www-authenticate': /^Bearer realm="modelgate"/ } }, String(header));
  }
});

t.test('a key store that knows an expired key refuses it with API key expired', async (t) => {
  const store: KeyStore = { verify: (secret) => (secret === 'uc_old' ? { keyId: 'k1', tenant: 't1', admin: false, expiresAt: Date.now() - 1 } : undefined) };
  await t.rejects(run('Bearer uc_old', [store]), { status: 401, message: 'API key expired' });
  const fresh: KeyStore = { verify: (secret) => (secret === 'uc_new' ? { keyId: 'k2', tenant: 't2', admin: false, expiresAt: Date.now() + 60_000 } : undefined) };
  const { ctx } = await run('Bearer uc_new', [fresh]);
  t.same(ctx.principal, { keyId: 'k2', tenant: 't2', admin: false });
});

t.test('the bootstrap store compares whole keys only', async (t) => {
  const store = bootstrapKeyStore(KEY);
  t.ok(store.verify(KEY));
  t.notOk(store.verify(''));
  t.notOk(store.verify(KEY.toUpperCase()));
});

t.test('the bearer parsing and constant-time comparison, shared with the metrics token', async (t) => {
  t.equal(bearerToken('Bearer abc'), 'abc');
  t.equal(bearerToken('bearer   abc '), 'abc', 'scheme case-insensitive, extra spaces tolerated');
  for (const header of [undefined, '', 'abc', 'Basic abc', 'Bearer', 'Bearer a b', ['Bearer abc']]) t.equal(bearerToken(header), undefined, JSON.stringify(header));
  const matches = secretMatcher('scrape-secret');
  t.ok(matches('scrape-secret'));
  for (const guess of ['', 'scrape-secre', 'scrape-secret ', 'SCRAPE-SECRET']) t.notOk(matches(guess), `not ${JSON.stringify(guess)}`);
});
