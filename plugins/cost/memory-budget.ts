// The embedded budget store: one process, so a check-and-reserve is atomic by construction (no
// await between reading and writing). Spend is kept in memory, read from the SQLite ledger the
// first time a period is seen (so totals survive a restart) and written back through its queue.
import { PERIODS, type Period } from './periods.js';
import type { Amounts, BudgetSnapshot, BudgetStore, PauseState, Periods, ReserveResult } from './budget-store.js';
import type { SqliteLedger } from './sqlite-ledger.js';

const PAUSE = 'pause';

export class MemoryBudget implements BudgetStore {
  private readonly spent = new Map<string, number>();
  private readonly reservations = new Map<string, number>();
  private reserved = 0;
  private paused: PauseState | undefined;

  constructor(private readonly ledger: SqliteLedger) {
    const saved = ledger.getState(PAUSE);
    this.paused = saved ? (JSON.parse(saved) as PauseState) : undefined;
  }

  private spentIn(period: Period): number {
    const id = `${period.name}:${period.key}`;
    let nano = this.spent.get(id);
    if (nano === undefined) {
      nano = this.ledger.spendOf(id);
      this.spent.set(id, nano);
    }
    return nano;
  }

  private currentPause(now = Date.now()): PauseState | undefined {
    if (this.paused && this.paused.until <= now) {
      this.paused = undefined;
      this.ledger.setState(PAUSE, undefined);
    }
    return this.paused;
  }

  async reserve(id: string, amount: number, periods: Periods, limits: Amounts): Promise<ReserveResult> {
    const pause = this.currentPause();
    if (pause) return { ok: false, reason: 'paused', pause };
    for (const name of PERIODS) {
      const spent = this.spentIn(periods[name]);
      if (spent + this.reserved + amount > limits[name]) return { ok: false, reason: 'limit', period: name, spent, reserved: this.reserved };
    }
    this.reservations.set(id, amount);
    this.reserved += amount;
    return { ok: true };
  }

  async settle(id: string, actual: number, periods: Periods): Promise<Amounts> {
    const held = this.reservations.get(id);
    if (held !== undefined) {
      this.reservations.delete(id);
      this.reserved -= held;
    }
    const after = {} as Amounts;
    for (const name of PERIODS) {
      const period = periods[name];
      after[name] = this.spentIn(period) + actual;
      this.spent.set(`${name}:${period.key}`, after[name]);
      this.ledger.addSpend(`${name}:${period.key}`, actual);
    }
    return after;
  }

  async snapshot(periods: Periods): Promise<BudgetSnapshot> {
    const spent = {} as Amounts;
    for (const name of PERIODS) spent[name] = this.spentIn(periods[name]);
    return { spent, reserved: this.reserved, pause: this.currentPause() };
  }

  async fireOnce(period: Period, rule: string, pause?: PauseState): Promise<boolean> {
    // A pause never shortens one in force (a day's pause firing during a week's).
    const current = this.currentPause();
    const longer = pause && (!current || pause.until > current.until) ? pause : undefined;
    const first = this.ledger.fireOnce(`${period.name}:${period.key}`, rule, longer && { name: PAUSE, value: JSON.stringify(longer) });
    if (first && longer) this.paused = longer;
    return first;
  }

  async resume(): Promise<boolean> {
    const was = this.currentPause() !== undefined;
    this.paused = undefined;
    this.ledger.setState(PAUSE, undefined);
    return was;
  }

  async close(): Promise<void> {
    // Old periods' totals are dropped from memory; the ledger keeps them.
    this.spent.clear();
  }
}
