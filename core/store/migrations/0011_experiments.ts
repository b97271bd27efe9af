// A/B experiments (plugins/experiments/): the experiments operators define, one exposure row per
// request that entered one (written in batches after the response), and the feedback clients send
// for those requests. Results are read from the exposures and the feedback by SQL aggregates per
// arm and unit (plugins/experiments/results.ts), so no per-request scan happens in JavaScript.
// Exposures and feedback live as long as their experiment: deleting it deletes them.
import type { Migration } from '../migrate.js';

export const experiments: Migration = {
  name: '0011_experiments',
  async up(db) {
    await db.schema
      .createTable('experiments')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull().unique())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('definition', 'text', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('started_at', 'bigint')
      .addColumn('ends_at', 'bigint')
      .addColumn('finished_at', 'bigint')
      .addColumn('finish_reason', 'text')
      .addColumn('winner', 'text')
      .addColumn('promoted_arm', 'text')
      .addColumn('promoted_by', 'text')
      .addColumn('promoted_at', 'bigint')
      .execute();
    await db.schema.createIndex('experiments_status').on('experiments').columns(['status', 'created_at']).execute();
    await db.schema
      .createTable('experiment_exposures')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('experiment_id', 'text', (c) => c.notNull())
      .addColumn('arm', 'text', (c) => c.notNull())
      .addColumn('request_id', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('unit', 'text', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('status', 'integer', (c) => c.notNull())
      .addColumn('error', 'integer', (c) => c.notNull())
      .addColumn('failed_over', 'integer', (c) => c.notNull())
      .addColumn('cache_hit', 'integer', (c) => c.notNull())
      .addColumn('provider', 'text')
      .addColumn('model', 'text')
      .addColumn('cost_nano', 'bigint', (c) => c.notNull())
      .addColumn('latency_ms', 'integer', (c) => c.notNull())
      .addColumn('prompt_tokens', 'integer', (c) => c.notNull())
      .addColumn('completion_tokens', 'integer', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('experiment_exposures_unit').on('experiment_exposures').columns(['experiment_id', 'arm', 'unit']).execute();
    await db.schema.createIndex('experiment_exposures_latency').on('experiment_exposures').columns(['experiment_id', 'arm', 'latency_ms']).execute();
    await db.schema.createIndex('experiment_exposures_request').on('experiment_exposures').columns(['request_id', 'at']).execute();
    await db.schema
      .createTable('experiment_feedback')
      .addColumn('experiment_id', 'text', (c) => c.notNull())
      .addColumn('exposure_id', 'text', (c) => c.notNull())
      .addColumn('metric', 'text', (c) => c.notNull())
      .addColumn('arm', 'text', (c) => c.notNull())
      .addColumn('unit', 'text', (c) => c.notNull())
      .addColumn('value', 'double precision', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('experiment_feedback_pk', ['exposure_id', 'metric'])
      .execute();
    await db.schema.createIndex('experiment_feedback_arm').on('experiment_feedback').columns(['experiment_id', 'metric', 'arm', 'unit']).execute();
  },
};
