// Opens the durable store: SQLite (better-sqlite3, WAL) in MODELGATE_DATA_DIR/modelgate.db by
// default, or PostgreSQL (a node-postgres pool) when MODELGATE_DATABASE_URL is set. Both are
// driven through one typed query layer, Kysely, so each table and query is written once.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type { Logger } from 'pino';
import type { Tables } from './schema.js';
import type { StoreSettings } from './settings.js';

export type Engine = 'sqlite' | 'postgres';

export interface Store {
  readonly engine: Engine;
  readonly db: Kysely<Tables>;
  /** Where it is, for logs and errors: the SQLite file, or PostgreSQL's host, database and schema (never a password). */
  readonly location: string;
  /** The PostgreSQL schema the tables live in (`main` for SQLite). */
  readonly schema: string;
  /** SQLite only: the handle itself, for maintenance Kysely cannot step through (incremental vacuum). */
  readonly sqlite?: Database.Database;
  /**
   * Runs `work` on one connection of its own that no timeout cuts short — for what may rightly
   * wait or run long (migrations queueing on their lock, index builds). SQLite: the one connection.
   */
  session<T>(work: (db: Kysely<Tables>) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The database could not be opened or reached: the start stops with this message. */
export class StoreError extends Error {
  override name = 'StoreError';
}

/** A statement that runs longer is cancelled by the server (sessions for migrations have none). */
const STATEMENT_TIMEOUT_MS = 30_000;
/** …and a query without an answer by then is given up by the client: a partitioned network cannot hang a flush. */
const QUERY_TIMEOUT_MS = STATEMENT_TIMEOUT_MS + 5_000;
const CONNECT_TIMEOUT_MS = 5_000;
/** DETACH PARTITION … CONCURRENTLY, which retention relies on, came with PostgreSQL 14. */
const MIN_POSTGRES = 140_000;
const SQLITE_FILE = 'modelgate.db';

/** BIGINT (int8) and NUMERIC (SUM of BIGINT) as JS numbers: amounts stay below 2^53 (core/settings bound them). */
function typesOf(pg: typeof import('pg').default) {
  return {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
  };
}

export async function openStore(settings: StoreSettings & { MODELGATE_DATA_DIR: string }, logger: Logger): Promise<Store> {
  return settings.MODELGATE_DATABASE_URL
    ? openPostgres(settings.MODELGATE_DATABASE_URL, settings.MODELGATE_DATABASE_SCHEMA, settings.MODELGATE_DATABASE_POOL_SIZE, logger)
    : openSqlite(resolve(settings.MODELGATE_DATA_DIR));
}

export function openSqlite(dir: string): Store {
  const file = join(dir, SQLITE_FILE);
  let database: Database.Database | undefined;
  try {
    mkdirSync(dir, { recursive: true });
    database = new Database(file);
    // Set before the first table exists: lets the sweeper hand freed pages back (incremental vacuum).
    database.pragma('auto_vacuum = INCREMENTAL');
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
    // Two processes on one data directory (two instances started from one checkout) wait for each other's writes.
    database.pragma('busy_timeout = 5000');
  } catch (error) {
    database?.close();
    throw new StoreError(`cannot open the SQLite database ${file}: ${(error as Error).message}`);
  }
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database }) });
  return {
    engine: 'sqlite',
    db,
    location: file,
    schema: 'main',
    sqlite: database,
    session: (work) => db.connection().execute(work),
    close: () => db.destroy(),
  };
}

async function openPostgres(url: string, schema: string, poolSize: number, logger: Logger): Promise<Store> {
  // Loaded only here: a gateway on SQLite (the default) does not pay for pg's modules at start (~50 ms).
  const { default: pg } = await import('pg');
  const pgTypes = typesOf(pg);
  const location = `${describeUrl(url)} (schema ${schema})`;
  const connect = (options: { max: number; timeouts: boolean }) => {
    const pool = new pg.Pool({
      connectionString: url,
      max: options.max,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      idleTimeoutMillis: 30_000,
      keepAlive: true,
      application_name: 'modelgate',
      query_timeout: options.timeouts ? QUERY_TIMEOUT_MS : undefined,
      types: pgTypes,
    });
    // An idle connection that breaks (a database restart) must not crash the process; the pool reconnects.
    pool.on('error', (error) => logger.warn({ err: error.message }, 'database: an idle connection failed'));
    // Set on every new connection, after whatever the URL asked for (`?options=` included): unqualified
    // names are ours, and a statement cannot run forever.
    const setup = CompiledQuery.raw(`set search_path to "${schema}"; set statement_timeout = ${options.timeouts ? STATEMENT_TIMEOUT_MS : 0}`);
    return new Kysely<Tables>({ dialect: new PostgresDialect({ pool, onCreateConnection: (connection) => connection.executeQuery(setup).then(() => undefined) }) });
  };
  const db = connect({ max: poolSize, timeouts: true });
  let version: number;
  try {
    const { rows } = await sql<{ server_version_num: string }>`show server_version_num`.execute(db);
    version = Number(rows[0]?.server_version_num);
  } catch (error) {
    await db.destroy().catch(() => undefined);
    throw new StoreError(`cannot reach PostgreSQL at ${location}: ${(error as Error).message}`);
  }
  if (version < MIN_POSTGRES) {
    await db.destroy().catch(() => undefined);
    throw new StoreError(`PostgreSQL at ${location} is version ${Math.floor(version / 10_000)}; modelgate needs 14 or newer`);
  }
  return {
    engine: 'postgres',
    db,
    location,
    schema,
    async session(work) {
      const own = connect({ max: 1, timeouts: false });
      try {
        return await own.connection().execute(work);
      } finally {
        await own.destroy();
      }
    },
    close: () => db.destroy(),
  };
}

/** `postgres://user:secret@host:5432/db?x` → `postgres://user@host:5432/db`: never the password. */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const user = parsed.username ? `${decodeURIComponent(parsed.username)}@` : '';
    return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}`;
  } catch {
    return 'postgres://(unparsable URL)';
  }
}
