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
  const applied: string[] = [];
  let recorded: string[] = [];
  await store.db
    .connection()
    .execute(async (db) => {
    const postgres = store.engine === 'postgres';
    if (postgres) {
      // A migration may rightly take longer than the pool's statement timeout (an index build).
      await sql`set statement_timeout = 0`.execute(db);
      await sql`select pg_advisory_lock(${lockKey(store.schema)})`.execute(db);
    }
    try {
      if (postgres) await sql`create schema if not exists ${sql.id(store.schema)}`.execute(db);
      await db.schema
        .createTable('modelgate_migrations')
        .ifNotExists()
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('applied_at', 'bigint', (c) => c.notNull())
        .execute();
      for (const migration of migrations) {
        if (await applyOne(db as Kysely<Tables>, store, migration)) {
          applied.push(migration.name);
          logger?.info({ migration: migration.name }, 'database: migration applied');
        }
      }
      recorded = (await db.selectFrom('modelgate_migrations').select('name').execute()).map((row) => row.name);
    } finally {
      if (postgres) {
        // A broken connection releases the lock itself; its error is not the one to report.
        await sql`select pg_advisory_unlock(${lockKey(store.schema)})`.execute(db).catch(() => undefined);
        await sql`reset statement_timeout`.execute(db).catch(() => undefined);
      }
    }
  })
    .catch((error: unknown) => {
      if (error instanceof MigrationError) throw error;
      throw new StoreError(`preparing the database at ${store.location} for migrations failed: ${(error as Error).message}`);
    });
  const known = new Set(migrations.map((m) => m.name));
  const unknown = recorded.filter((name) => !known.has(name)).sort();
  if (unknown.length > 0) logger?.warn({ unknown }, 'database: it holds migrations this version does not know (applied by a newer version); running on, as the expand/contract rule allows');
  return { applied, unknown };
}

/** Runs `migration` in a transaction of its own unless it is recorded; true if it ran. */
async function applyOne(db: Kysely<Tables>, store: Store, migration: Migration): Promise<boolean> {
  await sql.raw(store.engine === 'sqlite' ? 'begin immediate' : 'begin').execute(db);
  try {
    const done = await db.selectFrom('modelgate_migrations').select('name').where('name', '=', migration.name).executeTakeFirst();
    if (done) {
      await sql`commit`.execute(db);
      return false;
    }
    await migration.up(db, store);
    await db.insertInto('modelgate_migrations').values({ name: migration.name, applied_at: Date.now() }).execute();
    await sql`commit`.execute(db);
    return true;
  } catch (error) {
    await sql`rollback`.execute(db).catch(() => undefined);
    throw new MigrationError(migration.name, error);
  }
}
