// Alert rules (spec "alert rule": a threshold as a fraction of a budget, and an action), evaluated
// whenever spend moves: each rule fires once per budget period — across replicas with Redis, across
// restarts with the embedded ledger — as a `budget.threshold_reached` notification, which the events
// plugin delivers to the rule's channel (e-mail, chat, webhook) and to subscribed webhooks. A `pause`
// rule also pauses spending (budget.paused) until the period resets or an admin resumes.
import type { Logger } from 'pino';
import type { EventBus } from '../../core/events.js';
import { PERIODS, type Period } from './periods.js';
import type { Amounts, BudgetStore, PauseState, Periods } from './budget-store.js';
import type { BudgetRecords } from './budget-records.js';
import { toUsd } from './pricing.js';

export const ACTIONS = ['email', 'chat', 'webhook', 'pause'] as const;

export interface AlertRule {
  threshold: number;
  action: (typeof ACTIONS)[number];
  /** `0.8:chat`: how the rule is written, and its identity for firing once. */
  id: string;
}

/** `0.5:email` → a rule. Entries are validated by the setting's pattern at boot. */
export function parseRules(entries: readonly string[]): AlertRule[] {
  return entries
    .map((entry) => {
      const [threshold, action] = entry.split(':') as [string, AlertRule['action']];
      return { threshold: Number(threshold), action, id: `${Number(threshold)}:${action}` };
    })
    .sort((a, b) => a.threshold - b.threshold);
}

/** Key rules remembered as fired (keys × periods × rules); past it the memory starts over (the database still knows). */
const MAX_KEY_FIRED = 10_000;

export class Alerts {
  /** Rules known to have fired this period, so the store is asked once per rule, not per request. */
  private readonly fired = new Set<string>();
  private readonly keyFired = new Set<string>();

  constructor(
    private readonly rules: readonly AlertRule[],
    private readonly store: BudgetStore,
    private readonly events: EventBus,
    private readonly logger: Logger,
    private readonly records?: BudgetRecords,
  ) {}

  /**
   * A key's own budgets: its rules fire once per key, period and rule (marked in the database, shared
   * by replicas) as budget.threshold_reached with scope `key`. Pause rules do not apply to keys — a
   * key's budget is a hard cap, refused at its limit (budget.exceeded).
   */
  async evaluateKey(keyId: string, periods: Periods, spent: Amounts, limits: Partial<Amounts>): Promise<void> {
    if (!this.records) return;
    for (const name of PERIODS) {
      const limit = limits[name];
      if (limit === undefined || limit <= 0) continue;
      const ratio = spent[name] / limit;
      const period = periods[name];
      for (const rule of this.rules) {
        if (rule.threshold > ratio) break;
        if (rule.action === 'pause') continue;
        const id = `${keyId}|${name}:${period.key}:${rule.id}`;
        if (this.keyFired.has(id)) continue;
        let first: boolean;
        try {
          first = await this.records.fire(`${name}:${period.key}`, rule.id, undefined, `key:${keyId}`);
        } catch (error) {
          this.logger.warn({ err: (error as Error).message, keyId, rule: rule.id }, 'budget alert: not recorded for the key, store failed; retried on the next settlement');
          continue;
        }
        if (this.keyFired.size >= MAX_KEY_FIRED) this.keyFired.clear();
        this.keyFired.add(id);
        if (!first) continue;
        const data = {
          scope: 'key',
          key_id: keyId,
          period: name,
          period_key: period.key,
          threshold: rule.threshold,
          action: rule.action,
          spent_usd: toUsd(spent[name]),
          limit_usd: toUsd(limit),
          used_ratio: ratio,
          resets_at: new Date(period.resetsAt).toISOString(),
        };
        this.logger.warn({ ...data, kind: 'budget.threshold' }, 'budget alert');
        this.events.emit('notify', { type: 'budget.threshold_reached', data });
      }
    }
  }

  /** Rules remembered as fired: for the test of the bound. */
  get remembered(): number {
    return this.fired.size;
  }

  async evaluate(periods: Periods, spent: Amounts, limits: Amounts): Promise<void> {
    for (const name of PERIODS) {
      if (limits[name] <= 0) continue;
      const ratio = spent[name] / limits[name];
      for (const rule of this.rules) {
        if (rule.threshold > ratio) break;
        const period = periods[name];
        const id = `${name}:${period.key}:${rule.id}`;
        if (this.fired.has(id)) continue;
        const pause: PauseState | undefined = rule.action === 'pause' ? { period: name, periodKey: period.key, threshold: rule.threshold, until: period.resetsAt } : undefined;
        let first: boolean;
        try {
          // One atomic step marks the rule fired and sets its pause: neither happens without the other.
          first = await this.store.fireOnce(period, rule.id, pause);
        } catch (error) {
          // Not known as fired: the next settlement tries again.
          this.logger.warn({ err: (error as Error).message, period: name, rule: rule.id }, 'budget alert: not recorded, store failed; retried on the next settlement');
          continue;
        }
        // Rules of a period that is over never fire again: forgetting them keeps the set at one
        // period's rules per period name, instead of growing by a day's every day.
        for (const old of this.fired) if (old.startsWith(`${name}:`) && !old.startsWith(`${name}:${period.key}:`)) this.fired.delete(old);
        this.fired.add(id);
        if (first) this.fire(rule, period, spent[name], limits[name]);
      }
    }
  }

  private fire(rule: AlertRule, period: Period, spent: number, limit: number): void {
    const payload = {
      kind: 'budget.threshold',
      action: rule.action,
      at: new Date().toISOString(),
      period: period.name,
      period_key: period.key,
      threshold: rule.threshold,
      spent_usd: toUsd(spent),
      limit_usd: toUsd(limit),
      used_ratio: spent / limit,
      resets_at: new Date(period.resetsAt).toISOString(),
    };
    this.logger.warn(payload, 'budget alert');
    this.events.emit('alert', payload);
    const identity = { scope: 'global', period: period.name, period_key: period.key, threshold: rule.threshold };
    this.events.emit('notify', {
      type: 'budget.threshold_reached',
      data: { ...identity, key_id: null, action: rule.action, spent_usd: payload.spent_usd, limit_usd: payload.limit_usd, used_ratio: payload.used_ratio, resets_at: payload.resets_at },
    });
    if (rule.action === 'pause') this.events.emit('notify', { type: 'budget.paused', data: { ...identity, until: payload.resets_at } });
  }
}
