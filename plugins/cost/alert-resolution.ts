// The other half of a budget alert: its "resolved" event. A threshold that fired is resolved when its
// period ends (budget.threshold_resolved, reason period_reset); a pause ends when its period resets
// (budget.resumed, period_reset) or an admin resumes (budget.resumed, admin — and the pause rule's
// threshold is resolved, admin_resume). Each resolution is one conditional statement on the shared
// database, so with several replicas exactly one sends it.
import type { Logger } from 'pino';
import type { EventBus } from '../../core/events.js';
import type { Store } from '../../core/store/database.js';
import { currentPeriods, PERIODS, type PeriodName } from './periods.js';
import type { PauseState } from './budget-store.js';
import { GLOBAL } from './budget-records.js';

/** Rows looked at per pass: a backlog (a long outage) is worked through a pass at a time. */
const BATCH = 500;
const RULE = /^(\d+(?:\.\d+)?):(email|chat|webhook|pause)$/;

/** `global`, or `key:<id>` for a key's own budgets. */
export function scopeFields(scope: string): { scope: 'global' | 'key'; key_id: string | null } {
  return scope === GLOBAL ? { scope: 'global', key_id: null } : { scope: 'key', key_id: scope.startsWith('key:') ? scope.slice(4) : scope };
}

export class AlertResolution {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly store: Store,
    private readonly events: EventBus,
    private readonly logger: Logger,
  ) {}

  start(everyMs = 15_000): void {
    this.timer = setInterval(() => void this.tick(), everyMs).unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  tick(now = Date.now()): Promise<void> {
    this.running ??= this.resolve(now)
      .catch((error: Error) => this.logger.warn({ err: error.message }, 'budget alerts: resolutions not sent; tried again shortly'))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  /** An admin ended `pause`: says so, and resolves the pause rules of the periods in force. */
  async resumed(pause: PauseState, now = Date.now()): Promise<void> {
    this.events.emit('notify', { type: 'budget.resumed', data: { scope: 'global', period: pause.period, period_key: pause.periodKey, reason: 'admin' } });
    const current = currentPeriods(now);
    const open = await this.store.db
      .selectFrom('budget_alerts')
      .select(['scope', 'period', 'rule'])
      .where('scope', '=', GLOBAL)
      .where('resolved_at', 'is', null)
      .where(
        'period',
        'in',
        PERIODS.map((name) => `${name}:${current[name].key}`),
      )
      .execute();
    for (const row of open) if (row.rule.endsWith(':pause')) await this.resolveRow(row, 'admin_resume', now);
  }

  private async resolve(now: number): Promise<void> {
    const current = currentPeriods(now);
    const live = new Set(PERIODS.map((name) => `${name}:${current[name].key}`));
    const open = await this.store.db
      .selectFrom('budget_alerts')
      .select(['scope', 'period', 'rule'])
      .where('resolved_at', 'is', null)
      .where('period', 'not in', [...live])
      .orderBy('fired_at')
      .limit(BATCH)
      .execute();
    for (const row of open) await this.resolveRow(row, 'period_reset', now);
    const ended = await this.store.db.deleteFrom('budget_pauses').where('until', '<=', now).returningAll().execute();
    for (const pause of ended) {
      this.events.emit('notify', { type: 'budget.resumed', data: { scope: 'global', period: pause.period, period_key: pause.period_key, reason: 'period_reset' } });
    }
  }

  private async resolveRow(row: { scope: string; period: string; rule: string }, reason: 'period_reset' | 'admin_resume', now: number): Promise<void> {
    const marked = await this.store.db
      .updateTable('budget_alerts')
      .set({ resolved_at: now })
      .where('scope', '=', row.scope)
      .where('period', '=', row.period)
      .where('rule', '=', row.rule)
      .where('resolved_at', 'is', null)
      .executeTakeFirst();
    if (Number(marked.numUpdatedRows) === 0) return;
    const rule = RULE.exec(row.rule);
    // Only rules are recorded here; a row of another shape (a hand edit) ends silently.
    if (!rule) return;
    const [name, periodKey] = row.period.split(':') as [PeriodName, string];
    this.events.emit('notify', {
      type: 'budget.threshold_resolved',
      data: { ...scopeFields(row.scope), period: name, period_key: periodKey, threshold: Number(rule[1]), action: rule[2], reason },
    });
  }
}
