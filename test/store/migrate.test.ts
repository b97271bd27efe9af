// Migrations on both engines: applied once each, in order, by any number of starts at the same
// moment; a failing migration leaves nothing behind, is not recorded, and stops a start (exit 1,
// naming it); a database ahead of the code (a rolling upgrade) is accepted; `npm run migrate`.
import t from 'tap';
import { sql, type Kysely } from 'kysely';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { migrate, MigrationError, type Migration } from '../../core/store/migrate.js';
import { MIGRATIONS } from '../../core/store/migrations/index.js';
import { openStore, type Store } from '../../core/store/database.js';
import { ENGINES, openTestStore, postgresEnv, testDataDir, testSchema, TEST_DATABASE_URL } from '../helpers/database.js';
import { runLaunch } from '../helpers/process.js';

async function tables(store: Store): Promise<string[]> {
  const names =
    store.engine === 'postgres'
      ? (await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = ${store.schema}`.execute(store.db)).rows
      : (await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(store.db)).rows;
  return names.map((row) => row.name).sort();
}

const recorded = async (store: Store) => (await store.db.selectFrom('modelgate_migrations').select('name').orderBy('name').execute()).map((row) => row.name);

/** A migration that is not idempotent: it counts how often it ran. */
const counting: Migration = {
  name: '9001_counting',
  async up(db: Kysely<any>) {
    await db.schema.createTable('runs').ifNotExists().addColumn('n', 'integer').execute();
    await db.insertInto('runs').values({ n: 1 }).execute();
  },
};

t.test('postgres: five stores migrating in one process at the same moment run a migration that counts its runs once', async (t) => {
  const schema = testSchema();
  const stores = await Promise.all([1, 2, 3, 4, 5].map(() => openTestStore(t, 'postgres', { schema })));
  const reports = await Promise.all(stores.map((store) => migrate(store, [...MIGRATIONS, counting])));
  t.same(reports.flatMap((report) => report.applied).sort(), [...MIGRATIONS, counting].map((m) => m.name).sort(), 'each applied by exactly one of them');
  t.equal((await stores[0]!.db.selectFrom('runs' as never).selectAll().execute()).length, 1, 'the counting migration ran once');
});

for (const engine of ENGINES) {
  t.test(`${engine}: every migration is applied once, in order, and a second start applies none`, async (t) => {
    const store = await openTestStore(t, engine);
    const first = await migrate(store, MIGRATIONS);
    t.same(first.applied, MIGRATIONS.map((m) => m.name));
    t.same(await recorded(store), MIGRATIONS.map((m) => m.name).sort());
    t.ok((await tables(store)).includes('ledger') && (await tables(store)).includes('usage_daily') && (await tables(store)).includes('budget_alerts'));
    t.same((await migrate(store, MIGRATIONS)).applied, [], 'nothing left to apply');
  });

  t.test(`${engine}: five processes migrating one database at the same moment apply each migration exactly once`, async (t) => {
    const env = engine === 'postgres' ? postgresEnv() : { MODELGATE_DATA_DIR: testDataDir() };
    const runs = await Promise.all([1, 2, 3, 4, 5].map(() => runLaunch('migrate', env)));
    t.same(
      runs.map((run) => run.code),
      [0, 0, 0, 0, 0],
      runs.map((run) => run.stderr).join(''),
    );
    const applied = runs.flatMap((run) => run.stdout.split('\n').filter((line) => line.includes('"msg":"database: migration applied"')).map((line) => JSON.parse(line).migration as string));
    t.same(applied.sort(), MIGRATIONS.map((m) => m.name).sort(), 'each migration applied by exactly one of them');
  });

  t.test(`${engine}: a migration that fails leaves nothing behind and is not recorded; fixed, it applies`, async (t) => {
    const store = await openTestStore(t, engine);
    const failing: Migration = {
      name: '9002_half_done',
      async up(db) {
        await db.schema.createTable('first_half').addColumn('x', 'integer').execute();
        throw new Error('the second half is broken');
      },
    };
    const error = await migrate(store, [...MIGRATIONS, failing]).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    t.type(error, MigrationError);
    t.equal((error as MigrationError).migration, '9002_half_done');
    t.match((error as Error).message, /^migration 9002_half_done failed: the second half is broken$/);
    t.notOk((await tables(store)).includes('first_half'), 'its first statement was rolled back');
    t.notOk((await recorded(store)).includes('9002_half_done'), 'not recorded as applied');
    t.ok((await recorded(store)).includes('0001_ledger'), 'the migrations before it stay applied');
    const fixed: Migration = { name: '9002_half_done', up: (db) => db.schema.createTable('first_half').addColumn('x', 'integer').execute() };
    t.same((await migrate(store, [...MIGRATIONS, fixed])).applied, ['9002_half_done']);
  });

  t.test(`${engine}: a database that holds a migration this code does not know (a newer replica's) is accepted with a warning`, async (t) => {
    const store = await openTestStore(t, engine);
    await migrate(store, [...MIGRATIONS, counting]);
    const lines: Array<{ msg: string; unknown?: string[] }> = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const report = await migrate(store, MIGRATIONS, logger);
    t.same(report.unknown, ['9001_counting']);
    t.match(lines, [{ unknown: ['9001_counting'], msg: /applied by a newer version/ }]);
  });

  t.test(`${engine}: a start whose migration fails exits 1 with one line naming it, and so does npm run migrate`, async (t) => {
    const env = engine === 'postgres' ? postgresEnv() : { MODELGATE_DATA_DIR: testDataDir() };
    await conflictingTable(env);
    for (const entry of ['server', 'migrate']) {
      const run = await runLaunch(entry, env);
      t.equal(run.code, 1, `${entry} exits 1`);
      t.match(run.stderr, /^modelgate: migration 0001_ledger failed: .*usage_daily.*\n$/, `${entry} names the migration`);
      t.notMatch(run.stderr, /\n\s+at /, 'no stack trace');
    }
  });

  t.test(`${engine}: npm run migrate applies the migrations without starting the server`, async (t) => {
    const env = engine === 'postgres' ? postgresEnv() : { MODELGATE_DATA_DIR: testDataDir() };
    const first = await runLaunch('migrate', env);
    t.equal(first.code, 0, first.stderr);
    t.match(first.stdout, /"msg":"database migrated"/);
    const again = await runLaunch('migrate', env);
    t.equal(again.code, 0);
    t.match(again.stdout, /"msg":"database already current"/);
  });
}

t.test('a PostgreSQL that cannot be reached stops the start with one line, without the password', async (t) => {
  const run = await runLaunch('server', { MODELGATE_DATABASE_URL: 'postgres://modelgate:hunter2-secret@127.0.0.1:1/nowhere' });
  t.equal(run.code, 1);
  t.match(run.stderr, /^modelgate: cannot reach PostgreSQL at postgres:\/\/modelgate@127\.0\.0\.1:1\/nowhere \(schema public\): /);
  t.notMatch(run.stderr + run.stdout, /hunter2/, 'the password is never shown');
});

/** A table in the way of the first migration (a usage_daily of another shape), as a half-restored backup might leave. */
async function conflictingTable(env: Record<string, string>): Promise<void> {
  if (env.MODELGATE_DATABASE_URL) {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(`create schema "${env.MODELGATE_DATABASE_SCHEMA}"`);
    await client.query(`create table "${env.MODELGATE_DATABASE_SCHEMA}".usage_daily (day text)`);
    await client.end();
  } else {
    const database = new Database(join(env.MODELGATE_DATA_DIR!, 'modelgate.db'));
    database.exec('create table usage_daily (day text)');
    database.close();
  }
}

t.test("postgres: a URL's own ?options= (a hosted database's endpoint option) does not take the schema or the timeouts away", async (t) => {
  const schema = testSchema();
  const store = await openStore(
    { ...storeSettingsFor(schema), MODELGATE_DATABASE_URL: `${TEST_DATABASE_URL}?options=${encodeURIComponent('-c search_path=public -c statement_timeout=0')}` },
    pino({ level: 'silent' }),
  );
  t.teardown(() => store.close());
  await migrate(store, MIGRATIONS);
  t.ok((await tables(store)).includes('ledger'), 'the tables are in the configured schema');
  const { rows } = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(store.db);
  t.equal(rows[0]!.statement_timeout, '30s');
  const inPublic = await sql<{ n: number }>`select count(*)::int as n from pg_tables where schemaname = 'public' and tablename = 'ledger'`.execute(store.db);
  t.equal(inPublic.rows[0]!.n, 0, 'none in public');
});

t.test('postgres: a role that owns its schema but may not create schemas in the database migrates it (least privilege)', async (t) => {
  const schema = testSchema();
  const role = `${schema}_role`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`create role "${role}" login`);
  await admin.query(`create schema "${schema}" authorization "${role}"`);
  t.teardown(async () => {
    await admin.query(`drop schema if exists "${schema}" cascade`);
    await admin.query(`drop role if exists "${role}"`);
    await admin.end();
  });
  const url = new URL(TEST_DATABASE_URL);
  url.username = role;
  const store = await openStore({ ...storeSettingsFor(schema), MODELGATE_DATABASE_URL: url.toString() }, pino({ level: 'silent' }));
  t.teardown(() => store.close());
  t.same((await migrate(store, MIGRATIONS)).applied, MIGRATIONS.map((m) => m.name));
});

function storeSettingsFor(schema: string) {
  return {
    MODELGATE_DATABASE_URL: TEST_DATABASE_URL,
    MODELGATE_DATABASE_SCHEMA: schema,
    MODELGATE_DATABASE_POOL_SIZE: 2,
    MODELGATE_DATA_DIR: '.',
    MODELGATE_LEDGER_RETENTION: 60,
    MODELGATE_METRICS_RETENTION: 365,
    MODELGATE_METRICS_HOURLY_RETENTION: 30,
  };
}

for (const engine of ENGINES) {
  t.test(`${engine}: a migration that commits on its own is reported, not recorded as applied`, async (t) => {
    const store = await openTestStore(t, engine);
    const committing: Migration = {
      name: '9003_commits',
      async up(db) {
        await db.schema.createTable('committed_early').addColumn('x', 'integer').execute();
        await sql`commit`.execute(db);
        await sql`begin`.execute(db);
      },
    };
    const error = await migrate(store, [...MIGRATIONS, committing]).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    t.match((error as Error).message, /^migration 9003_commits failed: it ended the migration transaction itself/);
    t.notOk((await recorded(store)).includes('9003_commits'));
  });
}
