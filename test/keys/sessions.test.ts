// Dashboard sessions in the durable store, on SQLite and PostgreSQL: only the token's digest is kept,
// a session ends at its end time, with its key's end, when the bootstrap key changes, and a key holds
// at most MAX_PER_KEY of them.
import { createHash } from 'node:crypto';
import t from 'tap';
import { ENGINES, openTestStore } from '../helpers/database.js';
import { KeyRows } from '../../plugins/keys/key-rows.js';
import { Pepper } from '../../plugins/keys/secrets.js';
import { DashboardSessions, MAX_PER_KEY } from '../../plugins/keys/sessions.js';
import { KeyAdmin } from '../../plugins/keys/key-admin.js';

const BOOTSTRAP = 'uc_bootstrap_key_for_sessions';
const HOUR = 3_600_000;

for (const engine of ENGINES) {
  t.test(engine, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const rows = new KeyRows(store.db, store.engine);
    const pepper = new Pepper('p'.repeat(40));
    const sessions = new DashboardSessions(store.db, rows, pepper, BOOTSTRAP);
    const admin = new KeyAdmin(store.db, rows, pepper, { enabled: false, intervalDays: 90, graceSeconds: 60 }, async () => undefined);

    t.test('the token is kept only as its digest; the session ends at its end time', async (t) => {
      const now = Date.now();
      const signed = await sessions.open(BOOTSTRAP, HOUR, now);
      if (!signed.ok) throw new Error('sign-in failed');
      const stored = await store.db.selectFrom('dashboard_sessions').selectAll().where('key_id', '=', 'bootstrap').execute();
      t.notOk(JSON.stringify(stored).includes(signed.opened.token), 'no row holds the token');
      t.ok(stored.some((row) => row.id === createHash('sha256').update(signed.opened.token).digest('hex')));
      t.equal((await sessions.principal(signed.opened.token, now + HOUR - 1))?.record.admin, true);
      t.equal(await sessions.principal(signed.opened.token, now + HOUR), undefined, 'over at its end');
      t.equal((await sessions.open('uc_wrong', HOUR)).ok, false);
    });

    t.test('a new bootstrap key ends the old one\'s sessions', async (t) => {
      const signed = await sessions.open(BOOTSTRAP, HOUR);
      if (!signed.ok) throw new Error('sign-in failed');
      const restarted = new DashboardSessions(store.db, rows, pepper, 'uc_another_bootstrap_key');
      t.equal(await restarted.principal(signed.opened.token), undefined);
      t.ok(await sessions.principal(signed.opened.token), 'still good under the key it signed in with');
    });

    t.test('a session never outlives its key; an expired key cannot sign in', async (t) => {
      const now = Date.now();
      const made = await admin.create({ name: 'short', owner: 'default', admin: false, limits: null, allowedModels: null, expiresAt: now + 2 * HOUR });
      const signed = await sessions.open(made.secret, 8 * HOUR, now);
      if (!signed.ok) throw new Error('sign-in failed');
      t.equal(signed.opened.expiresAt, now + 2 * HOUR);
      t.same(await sessions.open(made.secret, HOUR, now + 3 * HOUR), { ok: false, reason: 'api_key_expired' });
    });

    t.test(`a key keeps at most ${MAX_PER_KEY} sessions, the oldest making way`, async (t) => {
      const made = await admin.create({ name: 'busy', owner: 'default', admin: false, limits: null, allowedModels: null, expiresAt: null });
      const tokens: string[] = [];
      const start = Date.now();
      for (let i = 0; i < MAX_PER_KEY + 3; i++) {
        const signed = await sessions.open(made.secret, HOUR, start + i);
        if (!signed.ok) throw new Error('sign-in failed');
        tokens.push(signed.opened.token);
      }
      const count = await store.db.selectFrom('dashboard_sessions').select((eb) => eb.fn.countAll<number>().as('n')).where('key_id', '=', made.row.id).executeTakeFirstOrThrow();
      t.equal(Number(count.n), MAX_PER_KEY);
      t.equal(await sessions.principal(tokens[0]!, start + 100), undefined, 'the oldest ended');
      t.ok(await sessions.principal(tokens.at(-1)!, start + 100), 'the newest stands');
    });

    t.test('signing in sweeps ended sessions away', async (t) => {
      const now = Date.now();
      await sessions.open(BOOTSTRAP, 300_000, now);
      await sessions.open(BOOTSTRAP, HOUR, now + 400_000);
      const ended = await store.db.selectFrom('dashboard_sessions').select('id').where('expires_at', '<=', now + 400_000).execute();
      t.same(ended, []);
    });
  });
}
