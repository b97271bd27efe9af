// budget.exceeded: a budget refused a request because its limit was reached — the gateway's, or a
// key's own. Sent once per scope and period across replicas (the shared alert state, fired by
// whoever refuses first and never resolved: the period's end is the end of it), never once per
// refused request. Recorded after the refusal is answered: the request never waits on it.
import type { Logger } from 'pino';
import type { EventBus } from '../../core/events.js';
import type { AlertStates } from '../../core/alert-states.js';
import { GLOBAL } from './budget-records.js';
import type { Periods, ReserveResult } from './budget-store.js';
import { scopeFields } from './alert-resolution.js';
import { toUsd } from './pricing.js';

/** Scopes known to be marked this process, so the database is asked once per scope and period. */
const MAX_REMEMBERED = 10_000;

export class ExceededAlerts {
  private readonly marked = new Set<string>();
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly states: AlertStates,
    private readonly events: EventBus,
    private readonly logger: Logger,
  ) {}

  refused(result: Extract<ReserveResult, { reason: 'limit' }>, periods: Periods, limit: number, keyId: string | undefined): void {
    const scope = result.scope === 'key' && keyId ? `key:${keyId}` : GLOBAL;
    const period = periods[result.period];
    const id = `${scope}|${period.name}:${period.key}`;
    if (this.marked.has(id)) return;
    if (this.marked.size >= MAX_REMEMBERED) this.marked.clear();
    this.marked.add(id);
    const work = this.states
      .fire('budget.exceeded', id, Number.MAX_SAFE_INTEGER)
      .then((first) => {
        if (!first) return;
        this.events.emit('notify', {
          type: 'budget.exceeded',
          data: {
            ...scopeFields(scope),
            period: period.name,
            period_key: period.key,
            spent_usd: toUsd(result.spent),
            limit_usd: toUsd(limit),
            resets_at: new Date(period.resetsAt).toISOString(),
          },
        });
      })
      .catch((error: Error) => {
        this.marked.delete(id);
        this.logger.warn({ err: error.message, scope }, 'budget: an exceeded budget was not recorded; said at the next refusal');
      })
      .finally(() => this.pending.delete(work));
    this.pending.add(work);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }
}
