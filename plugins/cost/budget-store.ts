// Where budgets live: spend per period, the estimates reserved by requests in flight, which alert
// thresholds have fired, and the pause. Two stores keep it: one process, in memory over the
// database (memory-budget.ts), and Redis shared by replicas (redis-budget.ts). Both hand each
// settlement's ledger rows to the ledger writer once the cost is counted. Amounts are nano-dollars.
import type { Period, PeriodName } from './periods.js';
import type { LedgerRow } from './ledger-row.js';

export type Periods = Record<PeriodName, Period>;
export type Amounts = Record<PeriodName, number>;

/** The gateway's spend after a settlement and, when the store knows it, the key's own (for its alert rules). */
export type Settled = Amounts & { key?: Amounts };

export interface PauseState {
  period: PeriodName;
  /** The period it belongs to (`2025-01-31`…); it ends when that period does. */
  periodKey: string;
  threshold: number;
  /** Epoch ms the period resets. */
  until: number;
}

/** A key's own budgets (the periods it sets a limit for), held on top of the gateway's. */
export interface KeyBudget {
  keyId: string;
  limits: Partial<Amounts>;
}

export type ReserveResult =
  | { ok: true }
  /** `scope`: whose budget refused, the gateway's or the key's own (then spent and reserved are the key's). */
  | { ok: false; reason: 'limit'; scope: 'gateway' | 'key'; period: PeriodName; spent: number; reserved: number }
  | { ok: false; reason: 'paused'; pause: PauseState };

export interface BudgetSnapshot {
  spent: Amounts;
  /** Reserved by requests in flight (on every replica), counted against every period. */
  reserved: number;
  pause?: PauseState;
}

export interface BudgetStore {
  /**
   * Atomically: refuses while paused, or if spent + reserved + amount would pass any period's limit
   * of the gateway or, given `key`, of the key's own budgets; else reserves `amount` under `id`
   * against both.
   */
  reserve(id: string, amount: number, periods: Periods, limits: Amounts, key?: KeyBudget): Promise<ReserveResult>;
  /**
   * Releases the reservation `id` (if any, on the key's budgets too), adds `actual` to every period
   * of the gateway and of key `keyId`, and hands `rows` (whose costs make up `actual`) to the
   * ledger. Returns the gateway's spend after. A store that keeps a settlement to retry it keeps its
   * rows with it: they reach the ledger once the cost is counted.
   */
  settle(id: string, actual: number, periods: Periods, rows?: LedgerRow[], keyId?: string): Promise<Settled>;
  snapshot(periods: Periods): Promise<BudgetSnapshot>;
  /**
   * Marks the rule (`0.8:chat`) fired for the period and, given `pause`, pauses spending — in one
   * atomic step, so a rule is never marked fired without its pause. True for the first caller only,
   * per period and rule, across replicas for Redis; a caller that gets an error may call again.
   */
  fireOnce(period: Period, rule: string, pause?: PauseState): Promise<boolean>;
  /** Ends a pause; false if there was none. */
  resume(): Promise<boolean>;
  close(): Promise<void>;
}
