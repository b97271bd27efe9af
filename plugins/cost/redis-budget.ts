// The Redis budget store, shared by replicas: one Lua script checks the pause and every period's
// spend plus everything reserved, and reserves — atomically, so concurrent requests on any number
// of replicas cannot reserve past a limit together. Each reservation also has an expiry: one left
// behind by a replica that died mid-request is released after RESERVATION_TTL_MS. A settlement
// that cannot reach Redis is kept and retried until it lands, so no spend is lost to an outage.
//
// A command that timed out on our side may still be queued on the socket and run later, so a
// settlement can reach Redis more than once: the settle script is idempotent (a `settled:<id>`
// marker, set in the same script, makes every later copy count nothing), and a reservation whose
// script timed out is released by a settlement of $0 under its id, kept and retried like any other
// (the marker also refuses the reservation if it arrives after its release). Kept settlements are
// re-sent only after Redis answered a PING on the connection, that is after every command sent
// before it has run: a frozen Redis does not pile up copies.
//
// Redis may lose its state: everything (a restart without persistence, a flush, a failover to an
// empty replica) or what it counted since its last snapshot (a restart from RDB/AOF, a failover to
// a lagging replica). The ledger in the database has every settled cost. Redis counts spend in an
// *epoch*, a random id; a new one begins when a script finds none, or when a replica sees Redis's
// run id change (a restart), and records each period's counter as it stood (its base: 0, or what a
// snapshot restored). Each ledger row records the epoch its cost was counted in. While an epoch is
// unseeded, reservations wait: after one ledger flush interval (so every replica wrote the rows it
// settled before), one replica reads, in one snapshot that holds the ledger's writers off, what
// the ledger has outside this epoch, and sets each counter to that plus what the epoch counted
// (counter − base); the pause and the fired alert rules come back from the database too. A replica
// whose rows of a lost epoch reach the database only after that (its writes were failing) adds
// them itself, once each (the late check, run inside its write). Replicas put back the
// reservations of their requests still in flight. That recovery: redis-recovery.ts; the scripts:
// redis-budget-scripts.ts.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { PERIODS, type Period } from './periods.js';
import type { Amounts, BudgetSnapshot, BudgetStore, KeyBudget, PauseState, Periods, ReserveResult, Settled } from './budget-store.js';
import type { LedgerRow } from './ledger-row.js';
import * as scripts from './redis-budget-scripts.js';
import { KEEP_SPEND_S, NO_KEY, RESERVATION_TTL_MS, baseKeys, keyKeys, keys, newEpoch, spentKeys, type Scripted } from './redis-budget-scripts.js';
import { EpochRecovery, type RecoveryDeps } from './redis-recovery.js';

/**
 * How long a `settled:<id>` marker outlives the last copy of its settlement that reached Redis
 * (each copy renews it). Copies run within moments of each other: those queued on the socket run
 * right after the first, and a kept settlement is re-sent only once Redis answers again.
 */
const SETTLED_MARKER_MS = 15 * 60_000;
const RETRY_MS = 1000;
/** A reservation that finds its epoch unseeded seeds it and tries again; after this many epochs in a row it gives up. */
const SEED_ATTEMPTS = 3;
/**
 * Releases of reservations whose script timed out (each a $0 settlement) kept at most: past it they
 * are dropped, and what they would release expires within RESERVATION_TTL_MS. Settlements that
 * carry a cost are always kept.
 */
const MAX_KEPT_RELEASES = 10_000;

interface Unsettled {
  id: string;
  actual: number;
  periods: Periods;
  rows: LedgerRow[];
  keyId?: string;
}

export class RedisBudget implements BudgetStore {
  private readonly redis: Scripted;
  private readonly unsettled: Unsettled[] = [];
  private readonly timer: NodeJS.Timeout;
  private retrying: Promise<void> | undefined;
  private droppedReleases = 0;
  private readonly recovery: EpochRecovery;

  constructor(
    redis: Redis,
    private readonly logger: Logger,
    private readonly deps: RecoveryDeps,
  ) {
    redis.defineCommand('modelgateBudgetReserve', { numberOfKeys: 20, lua: scripts.RESERVE });
    redis.defineCommand('modelgateBudgetSettle', { numberOfKeys: 19, lua: scripts.SETTLE });
    redis.defineCommand('modelgateBudgetState', { numberOfKeys: 11, lua: scripts.STATE });
    redis.defineCommand('modelgateBudgetFire', { numberOfKeys: 2, lua: scripts.FIRE });
    this.redis = redis as Scripted;
    this.timer = setInterval(() => void this.retry(), RETRY_MS);
    this.timer.unref();
    this.recovery = new EpochRecovery(this.redis, logger, deps);
  }

  /** Asks Redis whether it restarted before the first reservation (redis-recovery.ts). */
  start(): Promise<void> {
    return this.recovery.start();
  }

  async reserve(id: string, amount: number, periods: Periods, limits: Amounts, key?: KeyBudget): Promise<ReserveResult> {
    // Without a connection and without an offline queue (the gateway's connection) ioredis would
    // refuse at once: the script never runs, and there is nothing to release.
    if (this.redis.status !== 'ready' && !this.redis.options.enableOfflineQueue) throw new Error(`budget: Redis is not connected (${this.redis.status})`);
    if (this.recovery.checking) await this.recovery.checking;
    // Seeds of the epoch and of the key's counters are counted apart: a reservation may need both.
    let seeds = 0;
    let keySeeds = 0;
    for (;;) {
      let result: Array<number | string>;
      try {
        result = await this.redis.modelgateBudgetReserve(
          ...spentKeys(periods),
          keys.reservations,
          keys.expiries,
          keys.reserved,
          keys.pause,
          keys.settled(id),
          keys.epoch,
          keys.epochCreated,
          keys.seeded,
          ...baseKeys(periods),
          ...keyKeys(key?.keyId ?? NO_KEY, periods),
          id,
          amount,
          ...PERIODS.map((name) => limits[name]),
          RESERVATION_TTL_MS,
          newEpoch(),
          key?.keyId ?? NO_KEY,
          ...PERIODS.map((name) => key?.limits[name] ?? -1),
        );
      } catch (error) {
        // The script may still run (a timeout on our side, not on Redis's): release the reservation
        // it would make, by a settlement of $0 kept until it lands. The caller refuses the request.
        this.keep({ id, actual: 0, periods, rows: [] }, error as Error, 'budget: reservation failed, its release is kept for retry');
        throw error;
      }
      this.recovery.saw(String(result[1]));
      if (result[0] === 1) {
        this.recovery.remember(id, amount, key?.keyId);
        return { ok: true };
      }
      if (result[0] === 2) return { ok: false, reason: 'paused', pause: JSON.parse(String(result[2])) as PauseState };
      if (result[0] === 3) throw new Error(`budget: reservation ${id} was already settled`);
      if (result[0] === 4) {
        if (++seeds >= SEED_ATTEMPTS) throw new Error('budget: Redis keeps losing its state; not reserving');
        await this.recovery.seed(String(result[1]), Number(result[2]), Number(result[3]));
        continue;
      }
      if (result[0] === 5) {
        // The key's counters are not seeded in this epoch (its first budgeted request since Redis began it).
        if (++keySeeds >= SEED_ATTEMPTS) throw new Error('budget: Redis keeps losing its state; not reserving');
        await this.recovery.seedKey(String(result[1]), key!.keyId, Number(result[2]), Number(result[3]));
        continue;
      }
      const scope = result[0] === 6 ? 'key' : 'gateway';
      return { ok: false, reason: 'limit', scope, period: PERIODS[Number(result[2]) - 1]!, spent: Number(result[3]), reserved: Number(result[4]) };
    }
  }

  async settle(id: string, actual: number, periods: Periods, rows: LedgerRow[] = [], keyId?: string): Promise<Settled> {
    if (!Number.isSafeInteger(actual) || actual < 0) throw new Error(`budget: cannot settle ${actual} nano-dollars`);
    this.recovery.forget(id);
    try {
      return await this.send({ id, actual, periods, rows, keyId });
    } catch (error) {
      this.keep({ id, actual, periods, rows, keyId }, error as Error, 'budget: settlement kept for retry, Redis failed');
      throw error;
    }
  }

  private keep(entry: Unsettled, error: Error, message: string): void {
    if (entry.actual === 0 && entry.rows.length === 0 && this.unsettled.length >= MAX_KEPT_RELEASES) {
      // Only a release: what it would free expires on its own. Counted, logged once per outage.
      if (this.droppedReleases++ === 0) this.logger.warn({ kept: this.unsettled.length }, 'budget: too many releases kept; further ones are dropped (their reservations expire on their own)');
      return;
    }
    this.unsettled.push(entry);
    this.logger.warn({ err: error.message, unsettled: this.unsettled.length }, message);
  }

  /** Counts the settlement in Redis, then hands its rows, tagged with the epoch they counted in, to the ledger. */
  private async send({ id, actual, periods, rows, keyId }: Unsettled): Promise<Settled> {
    if (this.recovery.checking) await this.recovery.checking;
    const after = await this.redis.modelgateBudgetSettle(
      ...spentKeys(periods),
      keys.reservations,
      keys.expiries,
      keys.reserved,
      keys.settled(id),
      keys.epoch,
      keys.epochCreated,
      keys.seeded,
      ...baseKeys(periods),
      ...keyKeys(keyId ?? NO_KEY, periods),
      id,
      actual,
      KEEP_SPEND_S,
      SETTLED_MARKER_MS,
      newEpoch(),
      keyId ?? NO_KEY,
    );
    const epoch = String(after[3]);
    this.recovery.saw(epoch);
    for (const row of rows) row.epoch = epoch;
    // Not counted by the key's counters: its seed, or the late check once the rows are written, counts them.
    if (keyId !== undefined && after[4] !== 1) this.recovery.keyUncounted(rows);
    this.deps.ledger.add(rows);
    const settled: Settled = { day: Number(after[0]), week: Number(after[1]), month: Number(after[2]) };
    if (after[4] === 1 && after[5] !== undefined) settled.key = { day: Number(after[5]), week: Number(after[6]), month: Number(after[7]) };
    return settled;
  }

  /** Re-sends kept settlements, oldest first, one pass at a time. */
  private retry(): Promise<void> {
    this.retrying ??= this.resend().finally(() => (this.retrying = undefined));
    return this.retrying;
  }

  private async resend(): Promise<void> {
    if (this.unsettled.length === 0) return;
    try {
      // Redis runs one connection's commands in order: once it answers this, every copy sent
      // before has run (or never will), so a re-sent copy finds their marker.
      await this.redis.ping();
    } catch {
      return;
    }
    while (this.unsettled.length > 0) {
      try {
        await this.send(this.unsettled[0]!);
      } catch {
        return;
      }
      this.unsettled.shift();
      if (this.unsettled.length === 0) {
        this.logger.info({ droppedReleases: this.droppedReleases }, 'budget: every kept settlement reached Redis');
        this.droppedReleases = 0;
      }
    }
  }

  /** Where the budgets stand; an unseeded epoch is seeded first, so a Redis that lost its state never shows $0. */
  async snapshot(periods: Periods): Promise<BudgetSnapshot> {
    if (this.recovery.checking) await this.recovery.checking;
    let state = await this.state(periods);
    if (state[6] !== 1) {
      await this.recovery.seed(state[5], state[7], state[8]);
      state = await this.state(periods);
    }
    this.recovery.saw(state[5]);
    const [day, week, month, reserved, pause] = state;
    return { spent: { day: Number(day), week: Number(week), month: Number(month) }, reserved: Number(reserved), pause: pause ? (JSON.parse(pause) as PauseState) : undefined };
  }

  private state(periods: Periods) {
    return this.redis.modelgateBudgetState(...spentKeys(periods), keys.reserved, keys.pause, keys.epoch, keys.epochCreated, keys.seeded, ...baseKeys(periods), newEpoch());
  }

  async fireOnce(period: Period, rule: string, pause?: PauseState): Promise<boolean> {
    const now = Date.now();
    const ttl = Math.max(1000, period.resetsAt - now + 86_400_000);
    const fired = await this.redis.modelgateBudgetFire(
      keys.fired(period, rule),
      keys.pause,
      String(now),
      ttl,
      pause ? JSON.stringify(pause) : '',
      pause ? Math.max(1, pause.until - now) : 0,
      pause ? pause.until : 0,
    );
    if (fired !== 1) return false;
    // The durable copy, for a Redis that loses its state later; Redis already holds the working one.
    await this.deps.records
      .fire(`${period.name}:${period.key}`, rule, pause)
      .catch((error: Error) => this.logger.warn({ err: error.message, rule }, 'budget: a fired alert rule was not recorded in the database; a Redis that loses its state would fire it again'));
    return true;
  }

  async resume(): Promise<boolean> {
    const [inRedis, inDatabase] = await Promise.all([this.redis.del(keys.pause), this.deps.records.resume()]);
    return inRedis === 1 || inDatabase;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.recovery.close();
    await this.retry();
    if (this.unsettled.length > 0) {
      const nano = this.unsettled.reduce((sum, entry) => sum + entry.actual, 0);
      this.logger.error({ settlements: this.unsettled.length, usd: nano / 1e9 }, 'budget: settlements never reached Redis; their ledger rows are written uncounted in any epoch');
      // The database still gets the cost: a later rebuild of the budgets counts it.
      for (const entry of this.unsettled) this.deps.ledger.add(entry.rows);
    }
  }
}
