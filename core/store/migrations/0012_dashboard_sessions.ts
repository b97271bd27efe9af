// Dashboard sessions: a row per signed-in browser, found by the SHA-256 of its cookie's token, tied to
// the key and the very secret it signed in with, ending at expires_at (or at sign-out).
import type { Migration } from '../migrate.js';

export const dashboardSessions: Migration = {
  name: '0012_dashboard_sessions',
  async up(db) {
    await db.schema
      .createTable('dashboard_sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('key_hash', 'text', (c) => c.notNull())
      .addColumn('csrf', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('dashboard_sessions_key').on('dashboard_sessions').columns(['key_id', 'created_at']).execute();
    await db.schema.createIndex('dashboard_sessions_expires_at').on('dashboard_sessions').column('expires_at').execute();
  },
};
