// Stored responses of POST /v1/responses (`store` true, OpenAI's default): what GET
// /v1/responses/{id} answers and what previous_response_id continues. Each row belongs to the key
// that made it; `items` is the whole conversation up to and including the answer, as input items,
// so a continuation reads one row; its output items are also kept one per row, by id. Rows past
// expires_at are swept (MODELGATE_RESPONSES_RETENTION).
import type { Migration } from '../migrate.js';

export const responses: Migration = {
  name: '0007_responses',
  async up(db) {
    await db.schema
      .createTable('responses')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('response', 'text', (c) => c.notNull())
      .addColumn('items', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('responses_expires_at').on('responses').column('expires_at').execute();
    // Each output item by its id, for `item_reference` input items (clients such as the Vercel AI
    // SDK send earlier output that way while `store` is on).
    await db.schema
      .createTable('response_items')
      .addColumn('item_id', 'text', (c) => c.primaryKey())
      .addColumn('response_id', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('item', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('response_items_response').on('response_items').column('response_id').execute();
    await db.schema.createIndex('response_items_expires_at').on('response_items').column('expires_at').execute();
  },
};
