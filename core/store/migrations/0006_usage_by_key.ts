// Per-key budgets read a key's spend of the current periods from the daily rollups, once per key
// (at first use, and after Redis lost its state): this index finds one key's rows without reading
// every key's. Also serves GET /v1/usage for one key.
import type { Migration } from '../migrate.js';

export const usageByKey: Migration = {
  name: '0006_usage_by_key',
  async up(db) {
    await db.schema.createIndex('usage_daily_key').on('usage_daily').columns(['key_id', 'bucket']).execute();
  },
};
