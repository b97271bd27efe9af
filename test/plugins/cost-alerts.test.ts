// Alert rules when the budget store fails: a pause rule whose pause could not be written is not
// taken as fired, so the next settlement fires it (pause and alert) instead of losing both for
// the rest of the period.
import t from 'tap';
import { pino } from 'pino';
import { Alerts, parseRules } from '../../plugins/cost/alerts.js';
import { MemoryBudget } from '../../plugins/cost/memory-budget.js';
import { currentPeriods, type Period } from '../../plugins/cost/periods.js';
import { budgetParts, memoryBudget } from '../helpers/budget.js';
import { ENGINES, reopenTestStore } from '../helpers/database.js';
import { EventBus, type AlertEvent } from '../../core/events.js';
import type { Amounts, BudgetStore, PauseState, Periods, ReserveResult } from '../../plugins/cost/budget-store.js';

/**
 * A real store whose next write of a pause (with its rule's marker) fails, as a Redis timeout would.
 */
class PauseFailsOnce implements BudgetStore {
  failures = 1;
  constructor(private readonly real: MemoryBudget) {}
  reserve(id: string, amount: number, periods: Periods, limits: Amounts): Promise<ReserveResult> {
    return this.real.reserve(id, amount, periods, limits);
  }
  settle(id: string, actual: number, periods: Periods): Promise<Amounts> {
    return this.real.settle(id, actual, periods);
  }
  snapshot(periods: Periods) {
    return this.real.snapshot(periods);
  }
  async fireOnce(period: Period, rule: string, pause?: PauseState): Promise<boolean> {
    if (pause && this.failures-- > 0) throw new Error('Command timed out');
    return this.real.fireOnce(period, rule, pause);
  }
  resume(): Promise<boolean> {
    return this.real.resume();
  }
  close(): Promise<void> {
    return this.real.close();
  }
}

t.test('a pause rule whose pause could not be written fires on the next settlement, pause and alert', async (t) => {
  const store = new PauseFailsOnce(await memoryBudget(t));
  const events = new EventBus();
  const fired: AlertEvent[] = [];
  events.on('alert', (event) => fired.push(event));
  const alerts = new Alerts(parseRules(['0.5:email', '1.0:pause']), store, events, pino({ level: 'silent' }));
  const periods = currentPeriods();
  const limits = { day: 1000, week: 1_000_000, month: 1_000_000 };
  const spent = { day: 1000, week: 1000, month: 1000 };

  await alerts.evaluate(periods, spent, limits).catch(() => undefined);
  t.equal((await store.snapshot(periods)).pause, undefined, 'the store failed: not paused yet');

  await alerts.evaluate(periods, spent, limits).catch(() => undefined);
  t.match((await store.snapshot(periods)).pause, { period: 'day', periodKey: periods.day.key, threshold: 1, until: periods.day.resetsAt }, 'the next settlement paused');
  t.same(
    fired.map((event) => event.action),
    ['email', 'pause'],
    'each rule alerted once',
  );

  await alerts.evaluate(periods, spent, limits);
  t.equal(fired.length, 2, 'and not again');
});

for (const engine of ENGINES) {
  t.test(`the embedded store on ${engine} marks a rule fired and pauses in one step, and only the first time`, async (t) => {
    const budget = await memoryBudget(t, await budgetParts(t, engine));
    const day = currentPeriods().day;
    const pause = { period: 'day', periodKey: day.key, threshold: 0.9, until: day.resetsAt } as const;
    t.equal(await budget.fireOnce(day, '0.9:pause', pause), true);
    t.equal(await budget.resume(), true);
    t.equal(await budget.fireOnce(day, '0.9:pause', pause), false, 'fired already');
    t.equal((await budget.snapshot(currentPeriods())).pause, undefined, 'so the resume stands');
  });

  t.test(`the embedded store on ${engine}: a pause firing while a longer one holds does not shorten it, across a restart`, async (t) => {
    const parts = await budgetParts(t, engine);
    const budget = await memoryBudget(t, parts);
    const { day, week } = currentPeriods();
    const weekPause = { period: 'week', periodKey: week.key, threshold: 0.9, until: week.resetsAt + 1 } as const;
    const dayPause = { period: 'day', periodKey: day.key, threshold: 0.9, until: day.resetsAt } as const;
    t.equal(await budget.fireOnce(week, '0.9:pause', weekPause), true);
    t.equal(await budget.fireOnce(day, '0.9:pause', dayPause), true, 'the day rule fires (once)');
    t.same((await budget.snapshot(currentPeriods())).pause, weekPause, 'the week pause stands');
    await parts.ledger.close();
    await parts.store.close();
    const restarted = await budgetParts(t, engine, await reopenTestStore(t, parts.store));
    const reopened = await MemoryBudget.open(restarted.ledger, restarted.history, restarted.records);
    t.same((await reopened.snapshot(currentPeriods())).pause, weekPause, 'and is what the database kept, across a restart');
  });
}
