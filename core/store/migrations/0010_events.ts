// Events that must arrive (plugins/events/): the webhook endpoints operators register, the outbox
// every delivery waits in until a receiver took it (one row per event and destination, claimed by
// one replica at a time), the log of each attempt, and the shared state that makes an alert fire
// once across replicas: alert_states (provider down, error rate, keys expiring) and event_counters
// (refusals summed per key and minute by every replica, sent as one event). budget_alerts gains
// resolved_at: the period of a fired rule ended and its "resolved" event went out. Rows fired
// before this migration count as resolved, so an upgrade sends no flood of old resolutions.
import { sql } from 'kysely';
import type { Migration } from '../migrate.js';

export const events: Migration = {
  name: '0010_events',
  async up(db) {
    await db.schema
      .createTable('webhook_endpoints')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('event_types', 'text', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('disabled_reason', 'text')
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('event_outbox')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('channel', 'text', (c) => c.notNull())
      .addColumn('endpoint_id', 'text')
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
      .addColumn('lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('lease_holder', 'text')
      .addColumn('last_status_code', 'integer')
      .addColumn('last_latency_ms', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('delivered_at', 'bigint')
      .addColumn('replay_of', 'text')
      .execute();
    await db.schema.createIndex('event_outbox_due').on('event_outbox').columns(['status', 'next_attempt_at']).execute();
    await db.schema.createIndex('event_outbox_endpoint').on('event_outbox').columns(['endpoint_id', 'created_at', 'id']).execute();
    await db.schema.createIndex('event_outbox_created').on('event_outbox').column('created_at').execute();
    await db.schema.createIndex('event_outbox_replay').on('event_outbox').column('replay_of').execute();
    await db.schema
      .createTable('event_delivery_attempts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('delivery_id', 'text', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('ok', 'integer', (c) => c.notNull())
      .addColumn('status_code', 'integer')
      .addColumn('latency_ms', 'integer', (c) => c.notNull())
      .addColumn('error', 'text')
      .execute();
    await db.schema.createIndex('event_delivery_attempts_delivery').on('event_delivery_attempts').columns(['delivery_id', 'at']).execute();
    await db.schema.createIndex('event_delivery_attempts_at').on('event_delivery_attempts').column('at').execute();
    await db.schema
      .createTable('alert_states')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('fired_at', 'bigint', (c) => c.notNull())
      .addColumn('changed_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('alert_states_pk', ['kind', 'subject'])
      .execute();
    await db.schema
      .createTable('event_counters')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('window', 'bigint', (c) => c.notNull())
      .addColumn('count', 'bigint', (c) => c.notNull())
      .addColumn('emitted', 'integer', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('event_counters_pk', ['kind', 'subject', 'window'])
      .execute();
    await db.schema.createIndex('event_counters_due').on('event_counters').columns(['emitted', 'window']).execute();
    await db.schema.alterTable('budget_alerts').addColumn('resolved_at', 'bigint').execute();
    await sql`update budget_alerts set resolved_at = fired_at`.execute(db);
    await db.schema.createIndex('budget_alerts_open').on('budget_alerts').columns(['resolved_at', 'fired_at']).execute();
  },
};
