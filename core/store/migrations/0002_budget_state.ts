// What budgets must remember beyond Redis: the alert rules that fired per period (so a rule fires
// once, across restarts and a Redis that lost everything) and the pause in force.
import type { Migration } from '../migrate.js';

export const budgetState: Migration = {
  name: '0002_budget_state',
  async up(db) {
    await db.schema
      .createTable('budget_alerts')
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('period', 'text', (c) => c.notNull())
      .addColumn('rule', 'text', (c) => c.notNull())
      .addColumn('fired_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('budget_alerts_pk', ['scope', 'period', 'rule'])
      .execute();
    await db.schema.createIndex('budget_alerts_fired_at').on('budget_alerts').column('fired_at').execute();
    await db.schema
      .createTable('budget_pauses')
      .addColumn('scope', 'text', (c) => c.primaryKey())
      .addColumn('period', 'text', (c) => c.notNull())
      .addColumn('period_key', 'text', (c) => c.notNull())
      .addColumn('threshold', 'double precision', (c) => c.notNull())
      .addColumn('until', 'bigint', (c) => c.notNull())
      .execute();
  },
};
