// The embedded budget store: one process, so a check-and-reserve is atomic by construction (no
// await between reading and writing). Spend is kept in memory, read from the ledger's daily
// rollups the first time a period is seen (so totals survive a restart); settled rows go to the
// ledger writer. Fired alert rules and the pause live in the database (budget-records.ts).
import { PERIODS, type Period } from './periods.js';
import type { Amounts, BudgetSnapshot, BudgetStore, KeyBudget, PauseState, Periods, ReserveResult, Settled } from './budget-store.js';
import { MemoryKeyBudgets } from './memory-key-budgets.js';
import type { LedgerRow } from './ledger-row.js';
import type { LedgerWriter } from './ledger.js';
import type { SpendHistory } from './spend-history.js';
import type { BudgetRecords } from './budget-records.js';

const periodId = (period: Period) => period.id;

export class MemoryBudget implements BudgetStore {
  private readonly spent = new Map<string, number>();
  private loading: Promise<void> | undefined;
  private readonly reservations = new Map<string, number>();
  private reserved = 0;
  private readonly keys: MemoryKeyBudgets;

  private constructor(
    private readonly ledger: LedgerWriter,
    private readonly history: SpendHistory,
    private readonly records: BudgetRecords,
    private paused: PauseState | undefined,
  ) {
    this.keys = new MemoryKeyBudgets(ledger, history);
  }

  static async open(ledger: LedgerWriter, history: SpendHistory, records: BudgetRecords): Promise<MemoryBudget> {
    return new MemoryBudget(ledger, history, records, await records.pause());
  }

  private loaded(periods: Periods): boolean {
    return PERIODS.every((name) => this.spent.has(periodId(periods[name])));
  }

  /** Reads the spend of periods not seen yet from the ledger (once, however many requests ask at once). */
  private async load(periods: Periods): Promise<void> {
    while (!this.loaded(periods)) {
      this.loading ??= this.history
        .periodSpend(periods)
        .then((amounts) => {
          // Periods that are over are not asked about again: their totals stay in the ledger only.
          const current = new Set(PERIODS.map((name) => periodId(periods[name])));
          for (const id of this.spent.keys()) if (!current.has(id)) this.spent.delete(id);
          for (const name of PERIODS) if (!this.spent.has(periodId(periods[name]))) this.spent.set(periodId(periods[name]), amounts[name]);
        })
        .finally(() => (this.loading = undefined));
      await this.loading;
    }
  }

  private currentPause(now = Date.now()): PauseState | undefined {
    if (this.paused && this.paused.until <= now) this.paused = undefined;
    return this.paused;
  }

  async reserve(id: string, amount: number, periods: Periods, limits: Amounts, key?: KeyBudget): Promise<ReserveResult> {
    if (!this.loaded(periods)) await this.load(periods);
    if (key) await this.keys.load(key.keyId, periods);
    // From here to the end no await: the checks and the reservations on both budgets are one step.
    const pause = this.currentPause();
    if (pause) return { ok: false, reason: 'paused', pause };
    for (const name of PERIODS) {
      const spent = this.spent.get(periodId(periods[name]))!;
      if (spent + this.reserved + amount > limits[name]) return { ok: false, reason: 'limit', scope: 'gateway', period: name, spent, reserved: this.reserved };
    }
    if (key) {
      const own = this.keys.check(amount, periods, key);
      if (!own.ok) return own;
      this.keys.hold(id, amount, key.keyId);
    }
    this.reservations.set(id, amount);
    this.reserved += amount;
    return { ok: true };
  }

  async settle(id: string, actual: number, periods: Periods, rows: LedgerRow[] = [], keyId?: string): Promise<Settled> {
    // Loaded before the rows are queued: a period read from the ledger must not already hold them.
    // Should the database not answer, the rows are still queued and the reservation released.
    const failed = this.loaded(periods)
      ? undefined
      : await this.load(periods).then(
          () => undefined,
          (error: Error) => error,
        );
    const held = this.reservations.get(id);
    if (held !== undefined) {
      this.reservations.delete(id);
      this.reserved -= held;
    }
    const key = this.keys.settle(id, actual, periods, keyId);
    for (const row of rows) row.epoch = null;
    this.ledger.add(rows);
    // Counted in every period that is loaded, even if another could not be (it is read later, rows included).
    const after = {} as Amounts;
    for (const name of PERIODS) {
      const key = periodId(periods[name]);
      const spent = this.spent.get(key);
      if (spent === undefined) continue;
      after[name] = spent + actual;
      this.spent.set(key, after[name]);
    }
    if (failed) throw failed;
    return key ? { ...after, key } : after;
  }

  async snapshot(periods: Periods): Promise<BudgetSnapshot> {
    await this.load(periods);
    const spent = {} as Amounts;
    for (const name of PERIODS) spent[name] = this.spent.get(periodId(periods[name]))!;
    return { spent, reserved: this.reserved, pause: this.currentPause() };
  }

  async fireOnce(period: Period, rule: string, pause?: PauseState): Promise<boolean> {
    // A pause never shortens one in force (a day's pause firing during a week's).
    const current = this.currentPause();
    const longer = pause && (!current || pause.until > current.until) ? pause : undefined;
    const first = await this.records.fire(periodId(period), rule, longer);
    if (first && longer) this.paused = longer;
    return first;
  }

  async resume(): Promise<boolean> {
    const was = this.currentPause() !== undefined;
    this.paused = undefined;
    await this.records.resume();
    return was;
  }

  async close(): Promise<void> {}
}
