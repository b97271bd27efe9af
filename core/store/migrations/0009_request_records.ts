// Request records (core/records/): one row per recorded request. Metadata in plain columns, to list
// and filter by; the bodies and the error message as envelopes (core/records/envelope.ts) when
// encryption is on. A plain table on both engines: the sweeper deletes by created_at in batches.
// Listing is newest first by (created_at, id), optionally per key, end user or model.
import type { Migration } from '../migrate.js';

export const requestRecords: Migration = {
  name: '0009_request_records',
  async up(db) {
    await db.schema
      .createTable('request_records')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('request_id', 'text', (c) => c.notNull())
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('api', 'text', (c) => c.notNull())
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('provider', 'text')
      .addColumn('routed_model', 'text')
      .addColumn('status', 'integer', (c) => c.notNull())
      .addColumn('error_code', 'text')
      .addColumn('prompt_tokens', 'integer', (c) => c.notNull())
      .addColumn('completion_tokens', 'integer', (c) => c.notNull())
      .addColumn('cost_nano', 'bigint')
      .addColumn('latency_ms', 'integer', (c) => c.notNull())
      .addColumn('ttft_ms', 'integer')
      .addColumn('cache', 'text')
      .addColumn('stream', 'integer', (c) => c.notNull())
      .addColumn('end_user', 'text')
      .addColumn('encryption_key', 'text')
      .addColumn('truncated', 'integer', (c) => c.notNull())
      .addColumn('request_body', 'text', (c) => c.notNull())
      .addColumn('response_body', 'text')
      .addColumn('error_message', 'text')
      .execute();
    await db.schema.createIndex('request_records_created').on('request_records').columns(['created_at', 'id']).execute();
    await db.schema.createIndex('request_records_key').on('request_records').columns(['key_id', 'created_at']).execute();
    await db.schema.createIndex('request_records_user').on('request_records').columns(['end_user', 'created_at']).execute();
    await db.schema.createIndex('request_records_model').on('request_records').columns(['model', 'created_at']).execute();
  },
};
