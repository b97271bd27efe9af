// What the analytics reports (/v1/analytics/*) need beyond the usage rollups of 0001: per request
// the upstream calls, retries, fallbacks, the gateway's own time (overhead), the error message
// (redacted and anonymized before it is stored) and the circuits its failed calls opened; per
// rollup row their sums, an overhead histogram and the inputs of tokens per second; and two hourly
// tables the ledger writer fills in the same transaction: errors per code and message, and circuit
// breaker openings. Also the same rollups without the key and tenant (usage_hourly_models,
// usage_daily_models), filled from what the per-key rollups hold now: a report over every key reads
// a row per provider, model and status a bucket there instead of one per key. Every added column
// has a default, so a replica still on the previous release keeps writing (expand;
// docs/storage.md); what it writes during the upgrade is missing from the model rollups.
import { sql, type Kysely } from 'kysely';
import type { Migration } from '../migrate.js';

/** Rollup columns of this migration (frozen: a later change needs a migration of its own). */
const ROLLUP_COLUMNS = [
  'attempts',
  'retries',
  'fallbacks',
  'overhead_ms_sum',
  'ovh_0_1',
  'ovh_1_2',
  'ovh_2_5',
  'ovh_5_10',
  'ovh_10_25',
  'ovh_25_50',
  'ovh_50_100',
  'ovh_100_250',
  'ovh_250_inf',
  'gen_ms_sum',
  'gen_tokens',
];

async function addCounts(db: Kysely<any>, table: string, columns: readonly string[]): Promise<void> {
  // One column per statement: SQLite's ALTER TABLE adds one at a time.
  for (const column of columns) await db.schema.alterTable(table).addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0)).execute();
}

/** Every count column of a rollup after this migration (0001's and the above). */
const COUNT_COLUMNS = [
  'requests',
  'errors',
  'cache_hits',
  'prompt_tokens',
  'completion_tokens',
  'cached_tokens',
  'cost_nano',
  'saved_nano',
  'latency_ms_sum',
  'ttft_ms_sum',
  'ttft_count',
  'lat_0_100',
  'lat_100_250',
  'lat_250_500',
  'lat_500_1000',
  'lat_1000_2500',
  'lat_2500_5000',
  'lat_5000_10000',
  'lat_10000_30000',
  'lat_30000_60000',
  'lat_60000_inf',
  ...ROLLUP_COLUMNS,
];

async function createModelRollup(db: Kysely<any>, name: string, from: string): Promise<void> {
  let table = db.schema
    .createTable(name)
    .addColumn('bucket', 'bigint', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull());
  for (const column of COUNT_COLUMNS) table = table.addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0));
  await table.addPrimaryKeyConstraint(`${name}_pk`, ['bucket', 'provider', 'model', 'status']).execute();
  // Filled before `from` gains this migration's columns (they start at 0 anyway).
  const existing = COUNT_COLUMNS.filter((column) => !ROLLUP_COLUMNS.includes(column));
  const columns = sql.join(existing.map((column) => sql.ref(column)));
  const sums = sql.join(existing.map((column) => sql`sum(${sql.ref(column)})`));
  await sql`insert into ${sql.table(name)} (bucket, provider, model, status, ${columns}) select bucket, provider, model, status, ${sums} from ${sql.table(from)} group by bucket, provider, model, status`.execute(db);
}

export const analytics: Migration = {
  name: '0008_analytics',
  async up(db, store) {
    await db.schema
      .createTable('usage_errors_hourly')
      .addColumn('bucket', 'bigint', (c) => c.notNull())
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('status', 'integer', (c) => c.notNull())
      .addColumn('code', 'text', (c) => c.notNull())
      .addColumn('message', 'text', (c) => c.notNull())
      .addColumn('count', 'bigint', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('usage_errors_hourly_pk', ['bucket', 'tenant', 'key_id', 'provider', 'model', 'status', 'code', 'message'])
      .execute();
    await db.schema.createIndex('usage_errors_hourly_key').on('usage_errors_hourly').columns(['key_id', 'bucket']).execute();
    await db.schema
      .createTable('circuit_openings_hourly')
      .addColumn('bucket', 'bigint', (c) => c.notNull())
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('openings', 'bigint', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('circuit_openings_hourly_pk', ['bucket', 'tenant', 'key_id', 'provider', 'model'])
      .execute();
    // Reading the rollups to fill the model tables lets the previous release go on writing (PostgreSQL).
    await createModelRollup(db, 'usage_hourly_models', 'usage_hourly');
    await createModelRollup(db, 'usage_daily_models', 'usage_daily');
    // Writes to usage_hourly wait while this index is built (seconds per million rows), and the
    // ALTERs below take their tables' exclusive locks until the migration commits: they come last,
    // so the previous release's writes wait milliseconds for them, not for the backfill above.
    // The usage_daily_key index of 0006, for the hourly rows: a non-admin key's report reads its own rows only.
    await db.schema.createIndex('usage_hourly_key').on('usage_hourly').columns(['key_id', 'bucket']).execute();
    if (store.engine === 'postgres') {
      // Ranking every key × model of a week by cost read 7,300 pages of wide rows (160 ms of the
      // benchmark's 190); from this index, an index-only scan of the columns a ranking reads takes
      // 60–95 ms. It indexes counters every upsert changes, so usage_daily's updates are no longer
      // HOT: a few hundred rollup rows a second, written in the ledger's batches, off the request
      // path. SQLite is not helped (its time goes to sorting the groups), so it has none.
      await sql`create index usage_daily_rank on usage_daily (bucket) include (tenant, key_id, provider, model, status, requests, errors, cost_nano)`.execute(db);
    }
    await addCounts(db, 'ledger', ['attempts', 'retries', 'fallbacks', 'overhead_ms']);
    await db.schema.alterTable('ledger').addColumn('error_message', 'text').execute();
    await db.schema.alterTable('ledger').addColumn('opened_circuits', 'text').execute();
    await addCounts(db, 'usage_hourly', ROLLUP_COLUMNS);
    await addCounts(db, 'usage_daily', ROLLUP_COLUMNS);
  },
};
