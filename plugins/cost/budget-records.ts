// The durable half of budget state: which alert rules fired in which period, and the pause in
// force, in the database. The embedded store reads and writes them here directly; the Redis store
// keeps its working copy in Redis and writes here too, so a Redis that lost everything gets them
// back with the spend (redis-budget.ts) instead of firing every alert again and forgetting a pause.
import type { Transaction } from 'kysely';
import type { Store } from '../../core/store/database.js';
import type { Tables } from '../../core/store/schema.js';
import type { PauseState } from './budget-store.js';
import type { PeriodName } from './periods.js';

/** Budgets are the gateway's as a whole for now; per-key budgets get scopes of their own. */
export const GLOBAL = 'global';
/** Fired markers older than this are of periods long over: the sweeper removes them. */
export const ALERT_KEEP_MS = 62 * 86_400_000;

export class BudgetRecords {
  constructor(private readonly store: Store) {}

  /**
   * Records `rule` fired for `period` (`day:2026-11-25`) and, the first time, sets `pause` unless a
   * longer pause is in force — in one transaction. True for the first caller only, on any replica.
   */
  fire(period: string, rule: string, pause?: PauseState, scope = GLOBAL): Promise<boolean> {
    return this.store.db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto('budget_alerts')
        .values({ scope, period, rule, fired_at: Date.now() })
        .onConflict((conflict) => conflict.columns(['scope', 'period', 'rule']).doNothing())
        .returning('rule')
        .executeTakeFirst();
      if (!inserted) return false;
      if (pause) {
        const current = await trx.selectFrom('budget_pauses').select('until').where('scope', '=', scope).executeTakeFirst();
        if (!current || Number(current.until) < pause.until) await writePause(trx, scope, pause);
      }
      return true;
    });
  }

  /** The pause in force, if any. */
  async pause(scope = GLOBAL, now = Date.now()): Promise<PauseState | undefined> {
    const row = await this.store.db.selectFrom('budget_pauses').selectAll().where('scope', '=', scope).where('until', '>', now).executeTakeFirst();
    return row ? { period: row.period as PeriodName, periodKey: row.period_key, threshold: Number(row.threshold), until: Number(row.until) } : undefined;
  }

  /** Ends the pause; true if one was in force. */
  async resume(scope = GLOBAL, now = Date.now()): Promise<boolean> {
    const deleted = await this.store.db.deleteFrom('budget_pauses').where('scope', '=', scope).returning('until').executeTakeFirst();
    return deleted !== undefined && Number(deleted.until) > now;
  }

  /** The rules that fired in each of `periods` (`day:2026-11-25`, …). */
  async fired(periods: readonly string[], scope = GLOBAL): Promise<Array<{ period: string; rule: string }>> {
    if (periods.length === 0) return [];
    return this.store.db.selectFrom('budget_alerts').select(['period', 'rule']).where('scope', '=', scope).where('period', 'in', periods).execute();
  }
}

async function writePause(trx: Transaction<Tables>, scope: string, pause: PauseState): Promise<void> {
  const values = { period: pause.period, period_key: pause.periodKey, threshold: pause.threshold, until: pause.until };
  await trx
    .insertInto('budget_pauses')
    .values({ scope, ...values })
    .onConflict((conflict) => conflict.column('scope').doUpdateSet(values))
    .execute();
}
