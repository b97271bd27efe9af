// The spend ledger (one row per settled request or billed failed call) and the usage rollups per
// hour and per UTC day that are written with it. On PostgreSQL the ledger is partitioned by month.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Migration } from '../migrate.js';
import { ensurePartitions, monthStart } from '../partitions.js';

/** The histogram columns of this migration (frozen: a later change needs a migration of its own). */
const LATENCY_COLUMNS = ['lat_0_100', 'lat_100_250', 'lat_250_500', 'lat_500_1000', 'lat_1000_2500', 'lat_2500_5000', 'lat_5000_10000', 'lat_10000_30000', 'lat_30000_60000', 'lat_60000_inf'];

async function createRollup(db: Kysely<any>, name: string): Promise<void> {
  let table = db.schema
    .createTable(name)
    .addColumn('bucket', 'bigint', (c) => c.notNull())
    .addColumn('tenant', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull());
  for (const column of ['requests', 'errors', 'cache_hits', 'prompt_tokens', 'completion_tokens', 'cached_tokens', 'cost_nano', 'saved_nano', 'latency_ms_sum', 'ttft_ms_sum', 'ttft_count', ...LATENCY_COLUMNS]) {
    table = table.addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0));
  }
  await table.addPrimaryKeyConstraint(`${name}_pk`, ['bucket', 'tenant', 'key_id', 'provider', 'model', 'status']).execute();
}

export const ledger: Migration = {
  name: '0001_ledger',
  async up(db, store) {
    const table = db.schema
      .createTable('ledger')
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('request_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('status', 'integer', (c) => c.notNull())
      .addColumn('error_code', 'text')
      .addColumn('cache_hit', 'integer', (c) => c.notNull())
      .addColumn('prompt_tokens', 'bigint', (c) => c.notNull())
      .addColumn('completion_tokens', 'bigint', (c) => c.notNull())
      .addColumn('cached_tokens', 'bigint', (c) => c.notNull())
      .addColumn('cost_nano', 'bigint', (c) => c.notNull())
      .addColumn('saved_nano', 'bigint', (c) => c.notNull())
      .addColumn('latency_ms', 'integer', (c) => c.notNull())
      .addColumn('ttft_ms', 'integer')
      .addColumn('budget_epoch', 'text')
      .addPrimaryKeyConstraint('ledger_pk', ['at', 'id']);
    if (store.engine === 'postgres') {
      await table.modifyEnd(sql`partition by range (at)`).execute();
      const now = Date.now();
      await ensurePartitions(db, monthStart(now, -1), monthStart(now, 2), now, true);
    } else {
      await table.execute();
    }
    // A Redis rebuild subtracts the rows counted in the new epoch: found by epoch, whatever their time.
    await db.schema.createIndex('ledger_budget_epoch').on('ledger').columns(['budget_epoch', 'at']).execute();
    await createRollup(db, 'usage_hourly');
    await createRollup(db, 'usage_daily');
  },
};
