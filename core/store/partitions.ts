// PostgreSQL keeps the ledger in monthly range partitions on `at`, so retention drops a whole month
// (DETACH … CONCURRENTLY, then DROP: no row-by-row DELETE, no long lock) instead of deleting rows.
// Partitions are created ahead (the migration and every sweep make the previous, current and next
// two months exist), and on demand for a row that finds none (a clock a little off). A partition is
// created as a table of its own and then attached, which locks the ledger only against other schema
// changes (CREATE … PARTITION OF would lock out every insert and read while it waits).
import { sql, type Kysely } from 'kysely';

const NAME = /^ledger_y(\d{4})m(\d{2})$/;

/** Epoch ms of the first instant of the UTC month containing `ms`, shifted by `months`. */
export function monthStart(ms: number, months = 0): number {
  const date = new Date(ms);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + months, 1);
}

export function partitionName(month: number): string {
  const date = new Date(month);
  return `ledger_y${date.getUTCFullYear()}m${String(date.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The month a partition holds, from its name; undefined for a table that is not one. */
export function partitionMonth(name: string): number | undefined {
  const match = NAME.exec(name);
  return match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, 1) : undefined;
}

/** Partitions are made for at most this far from now: a row stamped decades off (a broken clock) is refused, not given hundreds. */
const REACH_MONTHS = 24;

/**
 * Creates the monthly partitions covering `from`..`to` (epoch ms) that do not exist yet, each in a
 * transaction of its own — or, given `inTransaction` (a migration), in the caller's.
 */
export async function ensurePartitions(db: Kysely<any>, from: number, to: number, now = Date.now(), inTransaction = false): Promise<void> {
  if (from < monthStart(now, -REACH_MONTHS) || to >= monthStart(now, REACH_MONTHS)) {
    throw new Error(`ledger: no partition is made for rows stamped ${new Date(from).toISOString()}..${new Date(to).toISOString()}, more than ${REACH_MONTHS} months from now`);
  }
  const attached = new Set(
    (
      await sql<{ name: string }>`select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
        where p.relname = 'ledger' and p.relnamespace = current_schema()::regnamespace`.execute(db)
    ).rows.map((row) => row.name),
  );
  for (let month = monthStart(from); month <= to; month = monthStart(month, 1)) {
    const name = partitionName(month);
    if (attached.has(name)) continue;
    const create = async (trx: Kysely<any>) => {
      // Waits briefly for the ledger's lock, then gives up: the next sweep (or write) tries again.
      await sql`set local lock_timeout = '5s'`.execute(trx);
      await sql`create table if not exists ${sql.id(name)} (like ledger including defaults including constraints)`.execute(trx);
      await sql`alter table ledger attach partition ${sql.id(name)} for values from (${sql.lit(month)}) to (${sql.lit(monthStart(month, 1))})`.execute(trx);
    };
    if (inTransaction) {
      await create(db);
      continue;
    }
    await db
      .transaction()
      .execute(create)
      .catch((error: { code?: string; message?: string }) => {
        // Another replica attached it between our look and our attach.
        if (error.code !== '42P07' && error.code !== '23505' && !/is already a partition/i.test(error.message ?? '')) throw error;
      });
  }
}

/** The ledger's monthly partitions in `schema` (attached, or left detached by an interrupted drop), oldest first. */
export async function listPartitions(db: Kysely<any>, schema: string): Promise<Array<{ name: string; month: number }>> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_class c join pg_namespace ns on ns.oid = c.relnamespace
    where ns.nspname = ${schema} and c.relkind in ('r', 'p') and c.relname like 'ledger_y%'`.execute(db);
  return rows
    .flatMap((row) => {
      const month = partitionMonth(row.name);
      return month === undefined ? [] : [{ name: row.name, month }];
    })
    .sort((a, b) => a.month - b.month);
}

/**
 * Detaches and drops the partitions whose every row is older than `cutoff`; returns their names.
 * DETACH CONCURRENTLY waits for queries on the partition without blocking the ledger's writers; a
 * detach interrupted halfway (a replica that died) is finished with FINALIZE.
 */
export async function dropPartitionsBefore(db: Kysely<any>, schema: string, cutoff: number): Promise<string[]> {
  const dropped: string[] = [];
  for (const { name, month } of await listPartitions(db, schema)) {
    if (monthStart(month, 1) > cutoff) break;
    await sql`alter table ledger detach partition ${sql.id(name)} concurrently`.execute(db).catch(async (error: { message?: string }) => {
      // Detached already by a sweep that died before its DROP.
      if (/is not a partition/i.test(error.message ?? '')) return;
      if (!/pending detach/i.test(error.message ?? '')) throw error;
      await sql`alter table ledger detach partition ${sql.id(name)} finalize`.execute(db);
    });
    await sql`drop table ${sql.id(name)}`.execute(db);
    dropped.push(name);
  }
  return dropped;
}
