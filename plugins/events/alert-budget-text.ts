// Human wording of the budget events. A reader of a budget alert needs three answers: whose budget
// (the gateway's, which refuses everyone, or one key's), how far it is spent, and whether requests
// are being refused now and until when — so `next` is inferred from the action and the threshold.
import type { EventDescription, EventMessage } from './types.js';
import { capitalize, instant, percent, periodAdjective, periodLabel, text, usd } from './alert-format.js';

type Data = Record<string, unknown>;

function isKey(data: Data): boolean {
  return data.scope === 'key';
}

/** "daily budget" or "daily budget of key k_1". */
function budgetName(data: Data): string {
  const name = `${periodAdjective(data.period)} budget`;
  return isKey(data) ? `${name} of key ${text(data.key_id)}` : name;
}

/** For sentences: "the gateway's daily budget" or "the daily budget of key k_1". */
function theBudget(data: Data): string {
  return isKey(data) ? `the ${budgetName(data)}` : `the gateway's ${budgetName(data)}`;
}

function budgetFacts(data: Data): Array<[string, string]> {
  return [
    ['Budget', isKey(data) ? `key ${text(data.key_id)}` : "gateway's (all keys)"],
    ['Period', periodLabel(data.period, data.period_key)],
  ];
}

/** Who is refused once a budget is spent: one key's requests, or every paid request. */
function refused(data: Data): string {
  return isKey(data) ? `Requests with key ${text(data.key_id)} are refused` : 'Paid requests are refused';
}

function thresholdReached({ data }: EventMessage): EventDescription {
  const threshold = typeof data.threshold === 'number' ? data.threshold : 0;
  const paused = data.action === 'pause';
  const resetsAt = instant(data.resets_at);
  let next = 'Requests continue; the next alert fires at the next threshold.';
  if (paused) next = `${refused(data)} until ${resetsAt} or until an admin resumes spending (POST /v1/admin/budget/resume).`;
  else if (threshold >= 1) next = `${refused(data)} until the budget resets at ${resetsAt}.`;
  return {
    title: `${capitalize(budgetName(data))} at ${percent(data.threshold)}: ${usd(data.spent_usd)} of ${usd(data.limit_usd)} spent`,
    summary:
      `${capitalize(theBudget(data))} for ${periodLabel(data.period, data.period_key)} has used ${percent(data.used_ratio)} of its limit, ` +
      `reaching the ${percent(data.threshold)} alert threshold${paused ? ', which pauses spending' : ''}.`,
    facts: [
      ...budgetFacts(data),
      ['Spent', usd(data.spent_usd)],
      ['Limit', usd(data.limit_usd)],
      ['Used', percent(data.used_ratio)],
      ['Threshold', percent(data.threshold)],
      ['Action', text(data.action)],
      ['Resets at', resetsAt],
    ],
    next,
  };
}

function thresholdResolved({ data }: EventMessage): EventDescription {
  const byAdmin = data.reason === 'admin_resume';
  return {
    title: `${capitalize(budgetName(data))} alert at ${percent(data.threshold)} resolved: ${byAdmin ? 'an admin resumed spending' : 'the period reset'}`,
    summary: byAdmin
      ? `An admin resumed spending on ${theBudget(data)}, so the ${percent(data.threshold)} alert no longer applies.`
      : `A new period began for ${theBudget(data)}, so the ${percent(data.threshold)} alert from ${periodLabel(data.period, data.period_key)} no longer applies.`,
    facts: [...budgetFacts(data), ['Threshold', percent(data.threshold)], ['Action', text(data.action)], ['Reason', text(data.reason)]],
    next: byAdmin
      ? 'Requests are served again; the alert fires again if spending reaches the threshold.'
      : 'Requests are served again; alerts fire again as spending in the new period reaches each threshold.',
  };
}

function exceeded({ data }: EventMessage): EventDescription {
  return {
    title: `${capitalize(budgetName(data))} exceeded: ${usd(data.spent_usd)} of ${usd(data.limit_usd)} spent`,
    summary: `${capitalize(theBudget(data))} for ${periodLabel(data.period, data.period_key)} is spent: ${usd(data.spent_usd)} against a limit of ${usd(data.limit_usd)}.`,
    facts: [...budgetFacts(data), ['Spent', usd(data.spent_usd)], ['Limit', usd(data.limit_usd)], ['Resets at', instant(data.resets_at)]],
    next: `${refused(data)} until the budget resets at ${instant(data.resets_at)}.`,
  };
}

function paused({ data }: EventMessage): EventDescription {
  return {
    title: `Budget paused: the ${periodAdjective(data.period)} budget reached ${percent(data.threshold)}`,
    summary: `Spending on the gateway's ${periodAdjective(data.period)} budget for ${periodLabel(data.period, data.period_key)} reached ${percent(data.threshold)}, a threshold set to pause spending.`,
    facts: [...budgetFacts(data), ['Threshold', percent(data.threshold)], ['Paused until', instant(data.until)]],
    next: `Paid requests are refused until ${instant(data.until)} or until an admin resumes spending (POST /v1/admin/budget/resume).`,
  };
}

function resumed({ data }: EventMessage): EventDescription {
  const why = data.reason === 'admin' ? 'an admin resumed spending' : data.reason === 'period_reset' ? 'a new period began' : text(data.reason);
  return {
    title: `Budget resumed: ${why}`,
    summary: `Spending on the gateway's ${periodAdjective(data.period)} budget is no longer paused (${periodLabel(data.period, data.period_key)}): ${why}.`,
    facts: [...budgetFacts(data), ['Reason', text(data.reason)]],
    next: 'Paid requests are served again.',
  };
}

export const budgetDescriptions: Record<string, (message: EventMessage) => EventDescription> = {
  'budget.threshold_reached': thresholdReached,
  'budget.threshold_resolved': thresholdResolved,
  'budget.exceeded': exceeded,
  'budget.paused': paused,
  'budget.resumed': resumed,
};
