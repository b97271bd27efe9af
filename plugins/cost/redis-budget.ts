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
// reservations of their requests still in flight. Scripts: redis-budget-scripts.ts.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { PERIODS, currentPeriods, type Period } from './periods.js';
import type { Amounts, BudgetSnapshot, BudgetStore, PauseState, Periods, ReserveResult } from './budget-store.js';
import type { LedgerRow } from './ledger-row.js';
import type { LedgerWriter } from './ledger.js';
import type { SpendHistory } from './spend-history.js';
import type { BudgetRecords } from './budget-records.js';
import type { LedgerTable } from '../../core/store/schema.js';
import * as scripts from './redis-budget-scripts.js';
import { keys } from './redis-budget-scripts.js';

const RESERVATION_TTL_MS = 15 * 60_000;
/**
 * How long a `settled:<id>` marker outlives the last copy of its settlement that reached Redis
 * (each copy renews it). Copies run within moments of each other: those queued on the socket run
 * right after the first, and a kept settlement is re-sent only once Redis answers again.
 */
const SETTLED_MARKER_MS = 15 * 60_000;
const RETRY_MS = 1000;
const KEEP_SPEND_S = 400 * 86_400;
/** A reservation that finds its epoch unseeded seeds it and tries again; after this many epochs in a row it gives up. */
const SEED_ATTEMPTS = 3;
/**
 * Releases of reservations whose script timed out (each a $0 settlement) kept at most: past it they
 * are dropped, and what they would release expires within RESERVATION_TTL_MS. Settlements that
 * carry a cost are always kept.
 */
const MAX_KEPT_RELEASES = 10_000;

type Result = Array<number | string>;
type Scripted = Redis & {
  modelgateBudgetReserve(...args: Array<string | number>): Promise<Result>;
  modelgateBudgetSettle(...args: Array<string | number>): Promise<[number, number, number, string]>;
  modelgateBudgetState(...args: Array<string | number>): Promise<[number, number, number, number, string | null, string, number, number, number]>;
  modelgateBudgetRestarted(...args: Array<string | number>): Promise<number>;
  modelgateBudgetSeed(...args: Array<string | number>): Promise<number>;
  modelgateBudgetLate(numberOfKeys: number, ...args: Array<string | number>): Promise<number>;
  modelgateBudgetRestore(numberOfKeys: number, ...args: Array<string | number>): Promise<number>;
  modelgateBudgetFire(...args: Array<string | number>): Promise<number>;
};

interface Unsettled {
  id: string;
  actual: number;
  periods: Periods;
  rows: LedgerRow[];
}

export interface RedisBudgetDeps {
  /** Where settled rows go once their cost is counted (tagged with the epoch). */
  ledger: LedgerWriter;
  /** What the database holds, to seed an epoch. */
  history: SpendHistory;
  /** The durable copy of fired rules and the pause. */
  records: BudgetRecords;
  /** How long after an epoch's creation its seed reads the ledger: every replica's flush interval, and a margin. */
  seedDelayMs: number;
}

export class RedisBudget implements BudgetStore {
  private readonly redis: Scripted;
  private readonly unsettled: Unsettled[] = [];
  private readonly timer: NodeJS.Timeout;
  private retrying: Promise<void> | undefined;
  private seeding: { epoch: string; done: Promise<void> } | undefined;
  /** This replica's reservations of requests in flight (id → nano-dollars and when), to put back into a new epoch. */
  private readonly outstanding = new Map<string, { amount: number; at: number }>();
  /** The epoch this replica last saw; a different one means Redis lost its state. */
  private epoch: string | undefined;
  private droppedReleases = 0;
  private readonly onReady = () => void this.checkRestart();

  constructor(
    redis: Redis,
    private readonly logger: Logger,
    private readonly deps: RedisBudgetDeps,
  ) {
    redis.defineCommand('modelgateBudgetReserve', { numberOfKeys: 14, lua: scripts.RESERVE });
    redis.defineCommand('modelgateBudgetSettle', { numberOfKeys: 13, lua: scripts.SETTLE });
    redis.defineCommand('modelgateBudgetState', { numberOfKeys: 11, lua: scripts.STATE });
    redis.defineCommand('modelgateBudgetRestarted', { numberOfKeys: 13, lua: scripts.RESTARTED });
    redis.defineCommand('modelgateBudgetSeed', { numberOfKeys: 9, lua: scripts.SEED });
    redis.defineCommand('modelgateBudgetLate', { lua: scripts.LATE });
    redis.defineCommand('modelgateBudgetRestore', { lua: scripts.RESTORE });
    redis.defineCommand('modelgateBudgetFire', { numberOfKeys: 2, lua: scripts.FIRE });
    this.redis = redis as Scripted;
    this.timer = setInterval(() => void this.retry(), RETRY_MS);
    this.timer.unref();
    deps.ledger.onInserted = (_trx, inserted) => this.countLate(inserted);
  }

  /** Asks Redis whether it restarted (before anything else asks it for an epoch), then at every reconnection. */
  async start(): Promise<void> {
    // Every reconnection may be to a Redis that restarted from a snapshot: its run id tells.
    this.redis.on('ready', this.onReady);
    if (this.redis.status === 'ready') await this.checkRestart();
  }

  private spentKeys(periods: Periods): string[] {
    return PERIODS.map((name) => keys.spent(periods[name]));
  }

  private baseKeys(periods: Periods): string[] {
    return PERIODS.map((name) => keys.base(periods[name]));
  }

  /** Notes the epoch a script answered with; a new one means Redis lost what this replica had reserved. */
  private saw(epoch: string): void {
    const previous = this.epoch;
    this.epoch = epoch;
    if (previous !== undefined && previous !== epoch) void this.restoreOutstanding();
  }

  async reserve(id: string, amount: number, periods: Periods, limits: Amounts): Promise<ReserveResult> {
    // Without a connection and without an offline queue (the gateway's connection) ioredis would
    // refuse at once: the script never runs, and there is nothing to release.
    if (this.redis.status !== 'ready' && !this.redis.options.enableOfflineQueue) throw new Error(`budget: Redis is not connected (${this.redis.status})`);
    for (let attempt = 1; ; attempt++) {
      let result: Result;
      try {
        result = await this.redis.modelgateBudgetReserve(
          ...this.spentKeys(periods),
          keys.reservations,
          keys.expiries,
          keys.reserved,
          keys.pause,
          keys.settled(id),
          keys.epoch,
          keys.epochCreated,
          keys.seeded,
          ...this.baseKeys(periods),
          id,
          amount,
          ...PERIODS.map((name) => limits[name]),
          RESERVATION_TTL_MS,
          newEpoch(),
        );
      } catch (error) {
        // The script may still run (a timeout on our side, not on Redis's): release the reservation
        // it would make, by a settlement of $0 kept until it lands. The caller refuses the request.
        this.keep({ id, actual: 0, periods, rows: [] }, error as Error, 'budget: reservation failed, its release is kept for retry');
        throw error;
      }
      this.saw(String(result[1]));
      if (result[0] === 1) {
        this.remember(id, amount);
        return { ok: true };
      }
      if (result[0] === 2) return { ok: false, reason: 'paused', pause: JSON.parse(String(result[2])) as PauseState };
      if (result[0] === 3) throw new Error(`budget: reservation ${id} was already settled`);
      if (result[0] === 4) {
        if (attempt >= SEED_ATTEMPTS) throw new Error('budget: Redis keeps losing its state; not reserving');
        await this.seed(String(result[1]), Number(result[2]), Number(result[3]));
        continue;
      }
      return { ok: false, reason: 'limit', period: PERIODS[Number(result[2]) - 1]!, spent: Number(result[3]), reserved: Number(result[4]) };
    }
  }

  async settle(id: string, actual: number, periods: Periods, rows: LedgerRow[] = []): Promise<Amounts> {
    if (!Number.isSafeInteger(actual) || actual < 0) throw new Error(`budget: cannot settle ${actual} nano-dollars`);
    this.outstanding.delete(id);
    try {
      return await this.send({ id, actual, periods, rows });
    } catch (error) {
      this.keep({ id, actual, periods, rows }, error as Error, 'budget: settlement kept for retry, Redis failed');
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
  private async send({ id, actual, periods, rows }: Unsettled): Promise<Amounts> {
    const after = await this.redis.modelgateBudgetSettle(
      ...this.spentKeys(periods),
      keys.reservations,
      keys.expiries,
      keys.reserved,
      keys.settled(id),
      keys.epoch,
      keys.epochCreated,
      keys.seeded,
      ...this.baseKeys(periods),
      id,
      actual,
      KEEP_SPEND_S,
      SETTLED_MARKER_MS,
      newEpoch(),
    );
    const epoch = String(after[3]);
    this.saw(epoch);
    for (const row of rows) row.epoch = epoch;
    this.deps.ledger.add(rows);
    return { day: Number(after[0]), week: Number(after[1]), month: Number(after[2]) };
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

  /** Starts a new epoch if Redis restarted since a replica last looked (its run id changed). */
  private async checkRestart(): Promise<void> {
    try {
      const info = await this.redis.info('server');
      const runId = /^run_id:(\w+)/m.exec(info)?.[1];
      if (!runId) return;
      const periods = currentPeriods();
      const restarted = await this.redis.modelgateBudgetRestarted(
        ...this.spentKeys(periods),
        keys.runId,
        keys.epoch,
        keys.epochCreated,
        keys.seeded,
        ...this.baseKeys(periods),
        keys.reservations,
        keys.expiries,
        keys.reserved,
        runId,
        newEpoch(),
      );
      if (restarted === 1) this.logger.warn({ runId }, 'budget: Redis restarted; its budget counters are rebuilt from the ledger');
    } catch (error) {
      // The next reconnection asks again; meanwhile a lost epoch is still found by every script.
      this.logger.warn({ err: (error as Error).message }, 'budget: could not ask Redis whether it restarted');
    }
  }

  /** Notes a reservation in flight; one older than a reservation lives is of no use (and is forgotten). */
  private remember(id: string, amount: number): void {
    const now = Date.now();
    if (this.outstanding.size >= 10_000) for (const [old, { at }] of this.outstanding) if (at < now - RESERVATION_TTL_MS) this.outstanding.delete(old);
    this.outstanding.set(id, { amount, at: now });
  }

  /** Puts this replica's in-flight reservations back into the epoch Redis moved to. */
  private async restoreOutstanding(): Promise<void> {
    const cutoff = Date.now() - RESERVATION_TTL_MS;
    const entries = [...this.outstanding].filter(([, { at }]) => at >= cutoff).map(([id, { amount }]) => [id, amount] as const);
    if (entries.length === 0) return;
    try {
      const restored = await this.redis.modelgateBudgetRestore(
        3 + entries.length,
        keys.reservations,
        keys.expiries,
        keys.reserved,
        ...entries.map(([id]) => keys.settled(id)),
        RESERVATION_TTL_MS,
        ...entries.flatMap(([id, amount]) => [id, amount]),
      );
      this.logger.info({ restored }, 'budget: reservations of requests in flight put back after Redis lost them');
    } catch (error) {
      this.logger.warn({ err: (error as Error).message, reservations: entries.length }, 'budget: could not put back the reservations in flight');
    }
  }

  /**
   * Runs inside each ledger write, after its rows were inserted: rows counted in an epoch Redis has
   * since lost, written after the current epoch was seeded, are added to Redis (once each). The
   * seed reads the ledger while holding its writers off, so a write either lands before it (and is
   * in the seed) or sees the epoch seeded here.
   */
  private async countLate(inserted: readonly LedgerTable[]): Promise<void> {
    const tagged = inserted.filter((row) => row.budget_epoch !== null && row.cost_nano > 0);
    if (tagged.length === 0) return;
    const [epoch, seeded] = await this.redis.mget(keys.epoch, keys.seeded);
    const late = tagged.filter((row) => row.budget_epoch !== epoch);
    if (late.length === 0 || !epoch || seeded !== epoch) return;
    const added = await this.redis.modelgateBudgetLate(
      2 + 4 * late.length,
      keys.epoch,
      keys.seeded,
      ...late.flatMap((row) => {
        const periods = currentPeriods(row.at);
        return [...this.spentKeys(periods), keys.late(row.id)];
      }),
      KEEP_SPEND_S,
      ...late.flatMap((row) => [row.budget_epoch!, row.cost_nano]),
    );
    if (added > 0) this.logger.warn({ rows: added }, 'budget: costs of a lost epoch written after the rebuild were added to Redis');
  }

  /**
   * Seeds `epoch` from the ledger, once per replica at a time (every replica that meets it may try;
   * the script lets the first one count). Times are Redis's clock.
   */
  private seed(epoch: string, created: number, now: number): Promise<void> {
    if (this.seeding?.epoch !== epoch) {
      const done = this.seedFromLedger(epoch, created, now).finally(() => {
        if (this.seeding?.done === done) this.seeding = undefined;
      });
      this.seeding = { epoch, done };
    }
    return this.seeding.done;
  }

  private async seedFromLedger(epoch: string, created: number, now: number): Promise<void> {
    const { ledger, history, records, seedDelayMs } = this.deps;
    this.logger.warn({ epoch }, 'budget: Redis holds no current budget state (restarted, flushed or new); rebuilding it from the ledger');
    // Rows settled before the loss, still queued on some replica, are written within one flush interval.
    const wait = created + seedDelayMs - now;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    await ledger.flush().catch((error: Error) => this.logger.warn({ err: error.message }, 'budget: this replica could not write its queued ledger rows before the rebuild'));
    const periods = currentPeriods();
    const [pause, fired] = await Promise.all([records.pause(), records.fired(PERIODS.map((name) => `${name}:${periods[name].key}`))]);
    // Fired rules first: once the epoch is seeded, settlements evaluate alert rules against them.
    if (fired.length > 0) {
      const restore = this.redis.multi();
      for (const { period, rule } of fired) {
        const target = periods[period.slice(0, period.indexOf(':')) as keyof Periods];
        if (target) restore.set(keys.fired(target, rule), String(Date.now()), 'PX', Math.max(1000, target.resetsAt - Date.now() + 86_400_000), 'NX');
      }
      await restore.exec();
    }
    // Read and applied while the ledger's writers wait: a row is either in this read or sees the epoch seeded (countLate).
    await history.whileWritersWait(async (read) => {
      const spent = await read.periodSpend(periods, epoch);
      const seeded = await this.redis.modelgateBudgetSeed(
        ...this.spentKeys(periods),
        ...this.baseKeys(periods),
        keys.epoch,
        keys.seeded,
        keys.pause,
        epoch,
        ...PERIODS.map((name) => Math.max(0, spent[name])),
        KEEP_SPEND_S,
        pause ? JSON.stringify(pause) : '',
        pause ? Math.max(1, pause.until - Date.now()) : 0,
        pause ? pause.until : 0,
      );
      if (seeded === 1) this.logger.info({ epoch, ledgerUsd: { day: spent.day / 1e9, week: spent.week / 1e9, month: spent.month / 1e9 }, paused: pause !== undefined, firedRules: fired.length }, 'budget: rebuilt from the ledger');
    });
  }

  /** Where the budgets stand; an unseeded epoch is seeded first, so a Redis that lost its state never shows $0. */
  async snapshot(periods: Periods): Promise<BudgetSnapshot> {
    let state = await this.state(periods);
    if (state[6] !== 1) {
      await this.seed(state[5], state[7], state[8]);
      state = await this.state(periods);
    }
    this.saw(state[5]);
    const [day, week, month, reserved, pause] = state;
    return { spent: { day: Number(day), week: Number(week), month: Number(month) }, reserved: Number(reserved), pause: pause ? (JSON.parse(pause) as PauseState) : undefined };
  }

  private state(periods: Periods) {
    return this.redis.modelgateBudgetState(...this.spentKeys(periods), keys.reserved, keys.pause, keys.epoch, keys.epochCreated, keys.seeded, ...this.baseKeys(periods), newEpoch());
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
    this.redis.off('ready', this.onReady);
    if (this.deps.ledger.onInserted) this.deps.ledger.onInserted = undefined;
    await this.retry();
    await this.seeding?.done.catch(() => undefined);
    if (this.unsettled.length > 0) {
      const nano = this.unsettled.reduce((sum, entry) => sum + entry.actual, 0);
      this.logger.error({ settlements: this.unsettled.length, usd: nano / 1e9 }, 'budget: settlements never reached Redis; their ledger rows are written uncounted in any epoch');
      // The database still gets the cost: a later rebuild of the budgets counts it.
      for (const entry of this.unsettled) this.deps.ledger.add(entry.rows);
    }
  }
}

/** A candidate for a new epoch's id, sent with each script that may create one: unique per process and call. */
const EPOCH_PREFIX = randomBytes(6).toString('hex');
let epochCount = 0;
function newEpoch(): string {
  return `${EPOCH_PREFIX}-${(epochCount++).toString(36)}`;
}
