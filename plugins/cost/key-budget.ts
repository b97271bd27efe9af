// A key's own budgets (Principal.limits: daily/weekly/monthly_cost_limit, USD), in the budget
// stores' terms: nano-dollars per period, only the periods the key sets. Undefined when it sets none:
// its requests are held to the gateway's budgets alone (its spend is still counted per key).
import type { Principal } from '../../core/context.js';
import type { KeyBudget } from './budget-store.js';
import type { PeriodName } from './periods.js';
import { toNano } from './pricing.js';

const FIELDS: Record<PeriodName, 'daily_cost_limit' | 'weekly_cost_limit' | 'monthly_cost_limit'> = {
  day: 'daily_cost_limit',
  week: 'weekly_cost_limit',
  month: 'monthly_cost_limit',
};

export function keyBudget(principal: Principal | undefined): KeyBudget | undefined {
  const own = principal?.limits;
  if (!own) return undefined;
  const limits: KeyBudget['limits'] = {};
  let any = false;
  for (const period of Object.keys(FIELDS) as PeriodName[]) {
    const usd = own[FIELDS[period]];
    if (usd === undefined) continue;
    limits[period] = toNano(usd);
    any = true;
  }
  return any ? { keyId: principal!.keyId, limits } : undefined;
}
