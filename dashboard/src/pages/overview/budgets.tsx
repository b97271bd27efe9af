// Spend of the current day, ISO week and month against the gateway's budgets (GET /v1/usage).
import { formatCost } from '../../components/money.js';
import { formatCount, formatDate, formatPercent, formatUsd } from '../../components/ui.js';
import type { Budget, Period, Usage } from '../../types/analytics.js';

const TITLES: Record<Period, string> = { day: 'Today', week: 'This week', month: 'This month' };

export function Budgets({ usage }: { usage: Usage }) {
  return (
    <div class="cards budget-cards">
      {(['day', 'week', 'month'] as const).map((period) => (
        <BudgetCard key={period} title={TITLES[period]} budget={usage.budgets[period]} />
      ))}
    </div>
  );
}

function BudgetCard({ title, budget }: { title: string; budget: Budget }) {
  const ratio = budget.used_ratio;
  const tone = ratio >= 1 ? 'bad' : ratio >= 0.8 ? 'warn' : 'ok';
  return (
    <div class="card">
      <span class="label">
        Spend {title.toLowerCase()} ({budget.period})
      </span>
      <span class="value">
        {formatCost(budget.spent_usd)} <span class="sub">of {formatUsd(budget.limit_usd)}</span>
      </span>
      <meter min={0} max={1} low={0.5} high={0.8} optimum={0} value={Math.min(ratio, 1)} aria-label={`${title}: ${formatPercent(ratio)} of the budget used`} />
      <span class={`sub budget-${tone}`}>
        {formatPercent(ratio)} used · {formatUsd(budget.remaining_usd)} left
        {budget.reserved_usd > 0 && <> · {formatUsd(budget.reserved_usd)} reserved in flight</>}
      </span>
      <span class="sub">
        {formatCount(budget.requests)} requests · {formatCount(budget.errors)} {budget.errors === 1 ? 'error' : 'errors'} · resets {formatDate(budget.resets_at)}
      </span>
    </div>
  );
}
