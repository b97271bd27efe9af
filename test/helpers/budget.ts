// The budget stores on their own, over a real database (and Redis), for tests that drive them
// without a gateway: the ledger writer, the spend history and the budget records they need.
import { pino } from 'pino';
import type { Redis } from 'ioredis';
import type { Engine, Store } from '../../core/store/database.js';
import { LedgerWriter } from '../../plugins/cost/ledger.js';
import { SpendHistory } from '../../plugins/cost/spend-history.js';
import { BudgetRecords } from '../../plugins/cost/budget-records.js';
import { MemoryBudget } from '../../plugins/cost/memory-budget.js';
import { RedisBudget } from '../../plugins/cost/redis-budget.js';
import { openTestStore } from './database.js';

const silent = pino({ level: 'silent' });

export interface BudgetParts {
  store: Store;
  ledger: LedgerWriter;
  history: SpendHistory;
  records: BudgetRecords;
}

type Teardown = { teardown(fn: () => Promise<void> | void): void };

/** A migrated store on `engine` with a ledger writer (flushing every 50 ms), closed when `t` ends. */
export async function budgetParts(t: Teardown, engine: Engine = 'sqlite', store?: Store): Promise<BudgetParts> {
  const opened = store ?? (await openTestStore(t, engine, { migrated: true }));
  const ledger = new LedgerWriter(opened, silent, { flushMs: 50, maxBacklog: 10_000 });
  t.teardown(() => ledger.close());
  return { store: opened, ledger, history: new SpendHistory(opened), records: new BudgetRecords(opened) };
}

export async function memoryBudget(t: Teardown, parts?: BudgetParts): Promise<MemoryBudget> {
  const { ledger, history, records } = parts ?? (await budgetParts(t));
  return MemoryBudget.open(ledger, history, records);
}

/** A Redis budget store on `redis` over `parts`, seeding an epoch 100 ms after it began. */
export async function redisBudget(t: Teardown, redis: Redis, parts: BudgetParts): Promise<RedisBudget> {
  const budget = new RedisBudget(redis, silent, { ledger: parts.ledger, history: parts.history, records: parts.records, seedDelayMs: 100 });
  t.teardown(() => budget.close());
  await budget.start();
  return budget;
}
