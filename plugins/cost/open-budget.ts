// Where the budgets live, as MODELGATE_STORE says: this process over the database (memory-budget.ts)
// or Redis shared by replicas (redis-budget.ts). Setups where the ledger is shared but the budgets
// are not, or the other way round, are said at boot: N processes could otherwise spend N times a
// limit, or rebuild budgets from one replica's ledger only.
import cluster from 'node:cluster';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { waitUntilReady } from '../../core/redis.js';
import type { Store } from '../../core/store/database.js';
import type { BudgetStore } from './budget-store.js';
import { MemoryBudget } from './memory-budget.js';
import { RedisBudget } from './redis-budget.js';
import type { RecoveryDeps } from './redis-recovery.js';
import { watchForSharing } from './sharing.js';

/** How long boot waits for Redis before starting anyway (requests then get 503 until it answers). */
const BOOT_WAIT_MS = 3000;
/** Added to the flush interval before a rebuild reads the ledger: a batch being written when Redis was lost commits. */
const SEED_MARGIN_MS = 500;

export interface BudgetHome {
  shared: boolean;
  store: Store;
  redis(): Redis;
  logger: Logger;
  parts: Omit<RecoveryDeps, 'seedDelayMs'>;
  /** MODELGATE_LEDGER_FLUSH_INTERVAL: how long a rebuild waits for every replica's rows. */
  flushMs: number;
}

export async function openBudgetStore(home: BudgetHome): Promise<{ budget: BudgetStore; stop(): Promise<void> }> {
  const { store, logger, parts } = home;
  if (home.shared) {
    // Workers (MODELGATE_WORKERS) share this SQLite file, ledger included: their primary says what
    // this warning says, once, about replicas on other machines (core/primary.ts).
    if (store.engine === 'sqlite' && !cluster.isWorker) {
      logger.warn(
        { database: store.location },
        'MODELGATE_STORE=redis with the embedded SQLite database: replicas share budgets through Redis but each keeps its own ledger, so usage reports and budgets rebuilt after a Redis loss see only this replica. Set MODELGATE_DATABASE_URL to share one.',
      );
    }
    const redis = home.redis();
    await waitUntilReady(redis, BOOT_WAIT_MS);
    const budget = new RedisBudget(redis, logger, { ...parts, seedDelayMs: home.flushMs + SEED_MARGIN_MS });
    await budget.start();
    return { budget, stop: () => budget.close() };
  }
  if (store.engine === 'postgres') {
    logger.warn(
      { database: store.location },
      'MODELGATE_STORE=embedded with a shared PostgreSQL: the ledger is shared, but each replica enforces the budgets, rate limits and pauses on its own (N replicas may spend N times a limit). With several replicas set MODELGATE_STORE=redis.',
    );
  }
  const budget = await MemoryBudget.open(parts.ledger, parts.history, parts.records);
  // On PostgreSQL the warning above says it already; on SQLite, other processes on the file say it.
  const sharing = store.engine === 'sqlite' ? await watchForSharing(store, logger) : undefined;
  return {
    budget,
    async stop() {
      await sharing?.stop();
      await budget.close();
    },
  };
}
