// Applies the migrations in migrations/index.ts, in order, each once, at start (and by
// `npm run migrate`). N replicas starting together apply each migration once: on PostgreSQL they
// queue on a session advisory lock; on SQLite each migration runs in a BEGIN IMMEDIATE
// transaction, which one writer holds at a time. Each migration and the row that records it commit
// in one transaction (both engines have transactional DDL): a migration that fails leaves nothing
// behind, is never recorded as applied, and stops the start with exit 1 and its name.
// A database that holds migrations this code does not know (a newer replica ran them during a
// rolling upgrade) is accepted with a warning: migrations only expand until every replica is new
// (docs/storage.md, "Upgrades").
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import { StoreError, type Store } from './database.js';
import type { Tables } from './schema.js';

export interface Migration {
  /** `0001_ledger`: the order is the list's, the name is the identity recorded when applied. */
  name: string;
  /** Runs inside the migration's transaction, on `db`; `store` says which engine and where. */
  up(db: Kysely<any>, store: Pick<Store, 'engine' | 'location'>): Promise<void>;
}

export class MigrationError extends Error {
  override name = 'MigrationError';
  constructor(
    readonly migration: string,
    cause: unknown,
  ) {
    super(`migration ${migration} failed: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

export interface MigrationReport {
  applied: string[];
  /** Recorded in the database, unknown to this code (applied by a newer version). */
  unknown: string[];
}

/** The advisory lock's key: per schema, so gateways in different schemas of one database do not queue on each other. */
function lockKey(schema: string): bigint {
  return createHash('sha256').update(`modelgate:migrations:${schema}`).digest().readBigInt64BE(0);
}

export async function migrate(store: Store, migrations: readonly Migration[], logger?: Logger): Promise<MigrationReport> {
  // A connection of its own, without timeouts: it may queue on the lock behind another replica's
  // migrations, and a migration may rightly run long (an index build).
  const { applied, recorded } = await store
    .session((db) => migrateOn(db, store, migrations, logger))
    .catch((error: unknown) => {
      if (error instanceof MigrationError) throw error;
      throw new StoreError(`preparing the database at ${store.location} for migrations failed: ${(error as Error).message}`);
    });
  const known = new Set(migrations.map((m) => m.name));
  const unknown = recorded.filter((name) => !known.has(name)).sort();
  if (unknown.length > 0) logger?.warn({ unknown }, 'database: it holds migrations this version does not know (applied by a newer version); running on, as the expand/contract rule allows');
  return { applied, unknown };
}

async function migrateOn(db: Kysely<Tables>, store: Store, migrations: readonly Migration[], logger?: Logger): Promise<{ applied: string[]; recorded: string[] }> {
  const postgres = store.engine === 'postgres';
  const applied: string[] = [];
  if (postgres) await sql`select pg_advisory_lock(${lockKey(store.schema)})`.execute(db);
  try {
    // Created only when missing: a schema a DBA made needs no CREATE right on the database.
    if (postgres && !(await schemaExists(db, store.schema))) await sql`create schema if not exists ${sql.id(store.schema)}`.execute(db);
    await begin(db, store);
    await db.schema.createTable('modelgate_migrations').ifNotExists().addColumn('name', 'text', (c) => c.primaryKey()).addColumn('applied_at', 'bigint', (c) => c.notNull()).execute();
    await sql`commit`.execute(db);
    for (const migration of migrations) {
      if (await applyOne(db, store, migration)) {
        applied.push(migration.name);
        logger?.info({ migration: migration.name }, 'database: migration applied');
      }
    }
    const recorded = (await db.selectFrom('modelgate_migrations').select('name').execute()).map((row) => row.name);
    return { applied, recorded };
  } finally {
    // A broken connection releases the lock itself; its error is not the one to report.
    if (postgres) await sql`select pg_advisory_unlock(${lockKey(store.schema)})`.execute(db).catch(() => undefined);
  }
}

async function schemaExists(db: Kysely<Tables>, schema: string): Promise<boolean> {
  const { rows } = await sql`select 1 from pg_namespace where nspname = ${schema}`.execute(db);
  return rows.length > 0;
}

/** How long a start waits for another process's migration on the same SQLite file. */
const SQLITE_WAIT_MS = 10 * 60_000;

/**
 * Begins the migration's transaction. SQLite: BEGIN IMMEDIATE takes the one write lock; another
 * process migrating holds it for as long as its migration runs, so a busy answer is waited out
 * (busy_timeout covers 5 s of it at a time).
 */
async function begin(db: Kysely<Tables>, store: Store): Promise<void> {
  if (store.engine === 'postgres') {
    await sql`begin`.execute(db);
    return;
  }
  const deadline = Date.now() + SQLITE_WAIT_MS;
  for (;;) {
    try {
      await sql`begin immediate`.execute(db);
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/**
 * Runs `migration` in a transaction of its own unless it is recorded; true if it ran. The migration
 * gets the connection inside that transaction: it must not open one of its own.
 */
async function applyOne(db: Kysely<Tables>, store: Store, migration: Migration): Promise<boolean> {
  await begin(db, store);
  try {
    const done = await db.selectFrom('modelgate_migrations').select('name').where('name', '=', migration.name).executeTakeFirst();
    if (done) {
      await sql`commit`.execute(db);
      return false;
    }
    // A savepoint the migration must leave in place: one that committed on its own (it opened a
    // transaction of its own) broke all-or-nothing, and is told so rather than recorded.
    await sql`savepoint modelgate_migration`.execute(db);
    await migration.up(db, store);
    await sql`release savepoint modelgate_migration`.execute(db).catch(() => {
      throw new Error('it ended the migration transaction itself (a migration must not open or commit one of its own)');
    });
    await db.insertInto('modelgate_migrations').values({ name: migration.name, applied_at: Date.now() }).execute();
    await sql`commit`.execute(db);
    return true;
  } catch (error) {
    await sql`rollback`.execute(db).catch(() => undefined);
    throw new MigrationError(migration.name, error);
  }
}
