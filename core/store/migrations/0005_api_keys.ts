// API keys beyond the bootstrap one: a row per key, its secret only as a keyed hash (HMAC-SHA256
// with the pepper), the hash of the secret it replaced while that one's grace period runs, and the
// key's own limits and allowed models as JSON text (the admin API's shape, validated before it is
// written). Also what a regenerate made with an Idempotency-Key answered: the hash it produced and, for a few
// minutes, its secret sealed with a key derived from the pepper (never in the clear).
import type { Migration } from '../migrate.js';

export const apiKeys: Migration = {
  name: '0005_api_keys',
  async up(db) {
    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('prefix', 'text', (c) => c.notNull())
      .addColumn('hash', 'text', (c) => c.notNull().unique())
      .addColumn('previous_hash', 'text')
      .addColumn('previous_expires_at', 'bigint')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('admin', 'integer', (c) => c.notNull())
      .addColumn('limits', 'text')
      .addColumn('allowed_models', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .addColumn('expires_at', 'bigint')
      .addColumn('version', 'integer', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('api_keys_previous_hash').on('api_keys').column('previous_hash').execute();
    await db.schema.createIndex('api_keys_prefix').on('api_keys').column('prefix').execute();
    await db.schema.createIndex('api_keys_name').on('api_keys').columns(['name', 'id']).execute();
    await db.schema.createIndex('api_keys_owner').on('api_keys').columns(['owner', 'id']).execute();
    await db.schema.createIndex('api_keys_expires_at').on('api_keys').column('expires_at').execute();
    await db.schema
      .createTable('api_key_idempotency')
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('idempotency_key', 'text', (c) => c.notNull())
      .addColumn('hash', 'text', (c) => c.notNull())
      .addColumn('sealed_secret', 'text')
      .addColumn('previous_expires_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('api_key_idempotency_pk', ['key_id', 'idempotency_key'])
      .execute();
    await db.schema.createIndex('api_key_idempotency_created_at').on('api_key_idempotency').column('created_at').execute();
  },
};
