// The real databases for tests of the durable store (never a mock): SQLite in a temporary
// directory, and the machine's PostgreSQL (127.0.0.1:5432, database `test`; test/setup/services.ts
// starts it if it does not answer) in a schema of the test's own, dropped when the test file ends.
// `ENGINES` lets one suite run against both.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { openStore, openSqlite, type Engine, type Store } from '../../core/store/database.js';
import { migrate } from '../../core/store/migrate.js';
import { MIGRATIONS } from '../../core/store/migrations/index.js';

export const ENGINES: readonly Engine[] = ['sqlite', 'postgres'];
export const TEST_DATABASE_URL = process.env.MODELGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const schemas: string[] = [];
const dirs: string[] = [];
let cleanupRegistered = false;

function registerCleanup(): void {
  if (cleanupRegistered) return;
  cleanupRegistered = true;
  t.teardown(async () => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    if (schemas.length === 0) return;
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    for (const schema of schemas) await client.query(`drop schema if exists "${schema}" cascade`);
    await client.end();
  });
}

/** A schema name no other test uses; dropped (with everything in it) when the test file ends. */
export function testSchema(): string {
  registerCleanup();
  // The second it was made is in the name: the test setup drops the ones a killed run left behind.
  const schema = `modelgate_test_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  schemas.push(schema);
  return schema;
}

/** A data directory of the test's own, removed when the test file ends. */
export function testDataDir(): string {
  registerCleanup();
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-db-'));
  dirs.push(dir);
  return dir;
}

/** Settings that put a gateway on PostgreSQL, in a schema of its own (or `schema`, to share one between replicas). */
export function postgresEnv(schema = testSchema()): Record<string, string> {
  return { MODELGATE_DATABASE_URL: TEST_DATABASE_URL, MODELGATE_DATABASE_SCHEMA: schema };
}

/** Settings that put a gateway on `engine`: a fresh PostgreSQL schema, or a fresh SQLite data directory. */
export function engineEnv(engine: Engine): Record<string, string> {
  return engine === 'postgres' ? postgresEnv() : { MODELGATE_DATA_DIR: testDataDir() };
}

/** An opened store on `engine`, not migrated (or migrated, with `migrated`), closed when `test` ends. */
export async function openTestStore(test: { teardown(fn: () => Promise<void> | void): void }, engine: Engine, options: { migrated?: boolean; schema?: string } = {}): Promise<Store> {
  const store =
    engine === 'postgres'
      ? await openStore(
          {
            MODELGATE_DATABASE_URL: TEST_DATABASE_URL,
            MODELGATE_DATABASE_SCHEMA: options.schema ?? testSchema(),
            MODELGATE_DATABASE_POOL_SIZE: 5,
            MODELGATE_DATA_DIR: '.',
            MODELGATE_LEDGER_RETENTION: 60,
            MODELGATE_METRICS_RETENTION: 365,
            MODELGATE_METRICS_HOURLY_RETENTION: 30,
          },
          pino({ level: 'silent' }),
        )
      : openSqlite(testDataDir());
  test.teardown(() => store.close());
  if (options.migrated) await migrate(store, MIGRATIONS);
  return store;
}

/** Why PostgreSQL cannot be used for the tests (the error it gave), or undefined when it can. */
export async function postgresProblem(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (error) {
    return (error as Error).message || String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Another store on the same database as `store` (a restart): its file, or its schema. Closed when `test` ends. */
export async function reopenTestStore(test: { teardown(fn: () => Promise<void> | void): void }, store: Store): Promise<Store> {
  if (store.engine === 'postgres') return openTestStore(test, 'postgres', { schema: store.schema });
  const reopened = openSqlite(dirname(store.location));
  test.teardown(() => reopened.close());
  return reopened;
}
