// Per-key budgets of the embedded budget store (memory-budget.ts): each key's spend per period and
// what its requests in flight reserved. A key's spend is read from the ledger's rollups the first
// time a key with budgets reserves in a period (after this process's queued rows are written, so the
// read misses none of them); settlements that land while it is read are added after it. A key
// that settles without being loaded is left to the ledger. At most MAX_KEYS keys are kept: past it,
// keys with nothing in flight are dropped, least recently used first, and read again when needed.
import { PERIODS, type Period } from './periods.js';
import type { Amounts, KeyBudget, Periods, ReserveResult } from './budget-store.js';
import type { LedgerWriter } from './ledger.js';
import type { SpendHistory } from './spend-history.js';

export const MAX_KEYS = 100_000;

const periodId = (period: Period) => period.id;

interface KeyState {
  /** Spend per period id, once read. */
  spent: Map<string, number>;
  /** Settled while the key's periods were being read: added once the read is in. */
  pending: Map<string, number>;
  loading?: Promise<void>;
  reserved: number;
}

export class MemoryKeyBudgets {
  private readonly keys = new Map<string, KeyState>();
  /** Reservation id → key and amount, for reservations made against a key's budgets. */
  private readonly reservations = new Map<string, { keyId: string; amount: number }>();

  constructor(
    private readonly ledger: LedgerWriter,
    private readonly history: SpendHistory,
    private readonly max = MAX_KEYS,
  ) {}

  private state(keyId: string): KeyState {
    let state = this.keys.get(keyId);
    if (state) {
      this.keys.delete(keyId); // most recently used last
    } else {
      state = { spent: new Map(), pending: new Map(), reserved: 0 };
      this.evict();
    }
    this.keys.set(keyId, state);
    return state;
  }

  private evict(): void {
    if (this.keys.size < this.max) return;
    for (const [keyId, state] of this.keys) {
      if (this.keys.size < this.max) return;
      if (state.reserved === 0 && !state.loading) this.keys.delete(keyId);
    }
  }

  private static loaded(state: KeyState, periods: Periods): boolean {
    return PERIODS.every((name) => state.spent.has(periodId(periods[name])));
  }

  /** Reads the key's periods not seen yet (once, however many requests ask at once). */
  async load(keyId: string, periods: Periods): Promise<void> {
    const state = this.state(keyId);
    while (!MemoryKeyBudgets.loaded(state, periods)) {
      state.loading ??= (async () => {
        await this.ledger.flush();
        const amounts = await this.history.keySpend(periods, keyId);
        const current = new Set(PERIODS.map((name) => periodId(periods[name])));
        for (const id of state.spent.keys()) if (!current.has(id)) state.spent.delete(id);
        for (const name of PERIODS) {
          const id = periodId(periods[name]);
          if (state.spent.has(id)) continue;
          state.spent.set(id, amounts[name] + (state.pending.get(id) ?? 0));
          state.pending.delete(id);
        }
      })().finally(() => (state.loading = undefined));
      await state.loading;
    }
  }

  /** Synchronous, after load(): refuses if the key's budgets cannot hold `amount`, else reserves it. */
  check(amount: number, periods: Periods, key: KeyBudget): ReserveResult {
    const state = this.state(key.keyId);
    for (const name of PERIODS) {
      const limit = key.limits[name];
      if (limit === undefined) continue;
      const spent = state.spent.get(periodId(periods[name])) ?? 0;
      if (spent + state.reserved + amount > limit) return { ok: false, reason: 'limit', scope: 'key', period: name, spent, reserved: state.reserved };
    }
    return { ok: true };
  }

  hold(id: string, amount: number, keyId: string): void {
    this.state(keyId).reserved += amount;
    this.reservations.set(id, { keyId, amount });
  }

  /** Releases `id`'s hold on its key, and counts `actual` to `keyId` if its spend is kept here. */
  /** Returns the key's spend after, when every period of it is kept here. */
  settle(id: string, actual: number, periods: Periods, keyId: string | undefined): Amounts | undefined {
    const held = this.reservations.get(id);
    if (held) {
      this.reservations.delete(id);
      const state = this.keys.get(held.keyId);
      if (state) state.reserved -= held.amount;
    }
    const state = keyId === undefined ? undefined : this.keys.get(keyId);
    if (!state) return undefined;
    const after = {} as Amounts;
    let known = true;
    for (const name of PERIODS) {
      const id = periodId(periods[name]);
      const spent = state.spent.get(id);
      if (spent !== undefined) state.spent.set(id, (after[name] = spent + actual));
      else {
        known = false;
        if (state.loading && actual !== 0) state.pending.set(id, (state.pending.get(id) ?? 0) + actual);
      }
    }
    return known ? after : undefined;
  }

  get size(): number {
    return this.keys.size;
  }
}
