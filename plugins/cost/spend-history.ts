// Reads what the ledger wrote: spend per budget period (to rebuild budgets after a restart, or after
// Redis lost them) and usage per day for GET /v1/usage. Both read the daily rollups, which are
// written in the same transaction as the ledger rows they sum: never a scan of raw rows, except the
// few rows counted in the current Redis epoch (found by index), subtracted when Redis is reseeded.
import { sql } from 'kysely';
import type { Store } from '../../core/store/database.js';
import { PERIODS } from './periods.js';
import type { Amounts, Periods } from './budget-store.js';

export interface UsageRow {
  day: string;
  tenant: string;
  keyId: string;
  provider: string;
  model: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  costNano: number;
  cacheHits: number;
  savedNano: number;
  errors: number;
}

const DAY_MS = 86_400_000;

export interface PeriodReader {
  /**
   * What the ledger holds for each period; with `epoch`, minus the rows counted in that Redis epoch
   * (what Redis must add to what the epoch itself counted). Rows and rollups are read in one
   * snapshot, so they agree.
   */
  periodSpend(periods: Periods, epoch?: string): Promise<Amounts>;
  /** What the ledger holds for each period of one key (by the usage_daily_key index). */
  keySpend(periods: Periods, keyId: string): Promise<Amounts>;
}

export class SpendHistory implements PeriodReader {
  constructor(private readonly store: Store) {}

  periodSpend(periods: Periods, epoch?: string): Promise<Amounts> {
    return this.snapshot((db) => readSpend(db, periods, epoch));
  }

  keySpend(periods: Periods, keyId: string): Promise<Amounts> {
    return readKeySpend(this.store.db, periods, keyId);
  }

  /**
   * Runs `work` while no ledger write can commit (PostgreSQL: the ledger locked in SHARE mode, which
   * lets reads through; SQLite: the write lock), reading in one snapshot taken after every write
   * before it committed. A Redis seed is applied inside, so a write lands either before the read or
   * after the seed.
   */
  whileWritersWait(work: (read: PeriodReader) => Promise<void>): Promise<void> {
    return this.store.session(async (db) => {
      const postgres = this.store.engine === 'postgres';
      // LOCK before the first read: a REPEATABLE READ snapshot is taken at the first query, after the lock.
      await sql.raw(postgres ? 'begin isolation level repeatable read' : 'begin immediate').execute(db);
      try {
        if (postgres) await sql`lock table ledger in share mode`.execute(db);
        await work({ periodSpend: (periods, epoch) => readSpend(db, periods, epoch), keySpend: (periods, keyId) => readKeySpend(db, periods, keyId) });
        await sql`commit`.execute(db);
      } catch (error) {
        await sql`rollback`.execute(db).catch(() => undefined);
        throw error;
      }
    });
  }

  /** Usage per UTC day `from`..`to` (`YYYY-MM-DD`, inclusive), tenant, key, provider and model; of one key if given. */
  async usage(from: string, to: string, keyId?: string): Promise<UsageRow[]> {
    let query = this.store.db
      .selectFrom('usage_daily')
      .select((eb) => [
        'bucket',
        'tenant',
        'key_id',
        'provider',
        'model',
        eb.fn.sum<number>('requests').as('requests'),
        eb.fn.sum<number>('prompt_tokens').as('prompt_tokens'),
        eb.fn.sum<number>('completion_tokens').as('completion_tokens'),
        eb.fn.sum<number>('cached_tokens').as('cached_tokens'),
        eb.fn.sum<number>('cost_nano').as('cost_nano'),
        eb.fn.sum<number>('cache_hits').as('cache_hits'),
        eb.fn.sum<number>('saved_nano').as('saved_nano'),
        eb.fn.sum<number>('errors').as('errors'),
      ])
      .where('bucket', '>=', Date.parse(`${from}T00:00:00Z`))
      .where('bucket', '<', Date.parse(`${to}T00:00:00Z`) + DAY_MS);
    if (keyId !== undefined) query = query.where('key_id', '=', keyId);
    const rows = await query.groupBy(['bucket', 'tenant', 'key_id', 'provider', 'model']).orderBy('bucket').execute();
    return rows.map((row) => ({
      day: new Date(Number(row.bucket)).toISOString().slice(0, 10),
      tenant: row.tenant,
      keyId: row.key_id,
      provider: row.provider,
      model: row.model,
      requests: Number(row.requests),
      promptTokens: Number(row.prompt_tokens),
      completionTokens: Number(row.completion_tokens),
      cachedTokens: Number(row.cached_tokens),
      costNano: Number(row.cost_nano),
      cacheHits: Number(row.cache_hits),
      savedNano: Number(row.saved_nano),
      errors: Number(row.errors),
    }));
  }

  /** Runs `read` in one consistent snapshot of the database. */
  private snapshot<T>(read: (db: Store['db']) => Promise<T>): Promise<T> {
    if (this.store.engine === 'sqlite') {
      // One connection, one writer: a transaction is a snapshot.
      return this.store.db.transaction().execute(read);
    }
    return this.store.db.connection().execute(async (db) => {
      await sql`begin isolation level repeatable read read only`.execute(db);
      try {
        const result = await read(db);
        await sql`commit`.execute(db);
        return result;
      } catch (error) {
        await sql`rollback`.execute(db).catch(() => undefined);
        throw error;
      }
    });
  }
}

async function readKeySpend(db: Store['db'], periods: Periods, keyId: string): Promise<Amounts> {
  // One read of the longest period's days, summed into each period: the month holds the day, the
  // ISO week may start in the month before.
  const earliest = Math.min(...PERIODS.map((name) => periods[name].start));
  const rows = await db
    .selectFrom('usage_daily')
    .select((eb) => ['bucket', eb.fn.sum<number>('cost_nano').as('nano')])
    .where('key_id', '=', keyId)
    .where('bucket', '>=', earliest)
    .groupBy('bucket')
    .execute();
  const spent = { day: 0, week: 0, month: 0 } as Amounts;
  for (const row of rows) {
    const bucket = Number(row.bucket);
    for (const name of PERIODS) if (bucket >= periods[name].start && bucket < periods[name].resetsAt) spent[name] += Number(row.nano);
  }
  return spent;
}

async function readSpend(db: Store['db'], periods: Periods, epoch?: string): Promise<Amounts> {
  const spent = {} as Amounts;
  for (const name of PERIODS) {
    const period = periods[name];
    const row = await db
      .selectFrom('usage_daily')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('cost_nano'), eb.lit(0)).as('nano'))
      .where('bucket', '>=', period.start)
      .where('bucket', '<', period.resetsAt)
      .executeTakeFirstOrThrow();
    spent[name] = Number(row.nano);
  }
  if (epoch !== undefined) {
    // Found by the (budget_epoch, at) index: however old a row counted in this epoch is (a
    // settlement kept through a long outage keeps its time), it is subtracted.
    const earliest = Math.min(...PERIODS.map((name) => periods[name].start));
    const rows = await db.selectFrom('ledger').select(['at', 'cost_nano']).where('budget_epoch', '=', epoch).where('at', '>=', earliest).execute();
    for (const row of rows) for (const name of PERIODS) if (row.at >= periods[name].start && row.at < periods[name].resetsAt) spent[name] -= row.cost_nano;
  }
  return spent;
}
