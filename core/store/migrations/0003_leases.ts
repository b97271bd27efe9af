// Leases name the replica that runs a background job (the retention sweeper) for a while; one that
// dies lets its lease expire and another takes over.
import type { Migration } from '../migrate.js';

export const leases: Migration = {
  name: '0003_leases',
  async up(db) {
    await db.schema
      .createTable('leases')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('holder', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
