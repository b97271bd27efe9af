// What the analytics reports (/v1/analytics/*) need beyond the usage rollups of 0001: per request
// the upstream calls, retries, fallbacks, the gateway's own time (overhead), the error message
// (redacted and anonymized before it is stored) and the circuits its failed calls opened; per
// rollup row their sums, an overhead histogram and the inputs of tokens per second; and two hourly
// tables the ledger writer fills in the same transaction: errors per code and message, and circuit
// breaker openings. Every added column has a default, so a replica still on the previous release
// keeps writing (expand; docs/storage.md).
import type { Kysely } from 'kysely';
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

export const analytics: Migration = {
  name: '0008_analytics',
  async up(db) {
    await addCounts(db, 'ledger', ['attempts', 'retries', 'fallbacks', 'overhead_ms']);
    await db.schema.alterTable('ledger').addColumn('error_message', 'text').execute();
    await db.schema.alterTable('ledger').addColumn('opened_circuits', 'text').execute();
    await addCounts(db, 'usage_hourly', ROLLUP_COLUMNS);
    await addCounts(db, 'usage_daily', ROLLUP_COLUMNS);
    // The usage_daily_key index of 0006, for the hourly rows: a non-admin key's report reads its own rows only.
    await db.schema.createIndex('usage_hourly_key').on('usage_hourly').columns(['key_id', 'bucket']).execute();
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
  },
};
