// The embedded store keeps budgets and rate counters in this process. Several gateways started
// from one checkout share its database file but not those, so each could spend up to the whole
// limit: the first holds a lease on the database, renewed while it runs, and the others say so at
// boot (MODELGATE_STORE=redis shares them).
import type { Logger } from 'pino';
import type { Store } from '../../core/store/database.js';
import { releaseLease, takeLease } from '../../core/store/lease.js';

const LEASE = 'embedded-budget';
const LEASE_MS = 60_000;

export async function watchForSharing(store: Store, logger: Logger): Promise<{ stop(): Promise<void> }> {
  const take = () => takeLease(store, LEASE, LEASE_MS).catch(() => true);
  if (!(await take())) {
    logger.warn(
      { database: store.location },
      'another gateway uses this database with the embedded store: each process enforces budgets and rate limits on its own, so together they may spend several times a limit. Set MODELGATE_STORE=redis to share them.',
    );
  }
  const timer = setInterval(() => void take(), LEASE_MS / 3);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await releaseLease(store, LEASE).catch(() => undefined);
    },
  };
}
