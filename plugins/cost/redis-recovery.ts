// Recovery of the Redis budget store after Redis lost its state (redis-budget.ts explains the
// epochs): noticing a restart by Redis's run id, seeding a new epoch from the ledger while the
// ledger's writers wait, adding rows of a lost epoch written after that seed, and putting back this
// replica's reservations of requests in flight. Scripts: redis-budget-scripts.ts.
import type { Logger } from 'pino';
import { PERIODS, currentPeriods } from './periods.js';
import type { Periods } from './budget-store.js';
import type { LedgerWriter } from './ledger.js';
import type { SpendHistory } from './spend-history.js';
import type { BudgetRecords } from './budget-records.js';
import type { LedgerTable } from '../../core/store/schema.js';
import * as scripts from './redis-budget-scripts.js';
import { KEEP_SPEND_S, RESERVATION_TTL_MS, baseKeys, keySpentKeys, keys, newEpoch, spentKeys, type Scripted } from './redis-budget-scripts.js';
import type { LedgerRow } from './ledger-row.js';

/** Rows waiting to be written whose key's counters did not count them, kept at most (oldest dropped first). */
const MAX_KEY_UNCOUNTED = 200_000;

export interface RecoveryDeps {
  /** Where settled rows go once their cost is counted (tagged with the epoch). */
  ledger: LedgerWriter;
  /** What the database holds, to seed an epoch. */
  history: SpendHistory;
  /** The durable copy of fired rules and the pause. */
  records: BudgetRecords;
  /** How long after an epoch's creation its seed reads the ledger: every replica's flush interval, and a margin. */
  seedDelayMs: number;
}

export class EpochRecovery {
  private seeding: { epoch: string; done: Promise<void> } | undefined;
  /** Seeds of keys' counters under way (`epoch key`), one per key at a time. */
  private readonly keySeeding = new Map<string, Promise<void>>();
  /** Ids of rows settled with a cost the key's counters did not count, until they are written. */
  private readonly uncounted = new Set<string>();
  /** This replica's reservations of requests in flight (id → nano-dollars and when), to put back into a new epoch. */
  private readonly outstanding = new Map<string, { amount: number; at: number; keyId: string }>();
  /** The epoch this replica last saw; a different one means Redis lost its state. */
  private epoch: string | undefined;
  /**
   * The restart check of the connection's latest 'ready', while it runs. A Redis restarted from an
   * older snapshot still holds an epoch, so only this check finds it: a script run before it ends
   * would count against the rolled-back spend (redis-budget.ts waits for it).
   */
  checking: Promise<void> | undefined;
  private readonly onReady = () => {
    const check: Promise<void> = this.checkRestart().finally(() => {
      if (this.checking === check) this.checking = undefined;
    });
    this.checking = check;
  };

  constructor(
    private readonly redis: Scripted,
    private readonly logger: Logger,
    private readonly deps: RecoveryDeps,
  ) {
    redis.defineCommand('modelgateBudgetRestarted', { numberOfKeys: 15, lua: scripts.RESTARTED });
    redis.defineCommand('modelgateBudgetKeySeed', { numberOfKeys: 6, lua: scripts.KEY_SEED });
    redis.defineCommand('modelgateBudgetKeyLate', { lua: scripts.KEY_LATE });
    redis.defineCommand('modelgateBudgetSeed', { numberOfKeys: 9, lua: scripts.SEED });
    redis.defineCommand('modelgateBudgetLate', { lua: scripts.LATE });
    redis.defineCommand('modelgateBudgetRestore', { lua: scripts.RESTORE });
    deps.ledger.onInserted = (_trx, inserted) => this.countLate(inserted);
  }

  /** Asks Redis whether it restarted (before anything else asks it for an epoch), then at every reconnection. */
  async start(): Promise<void> {
    // Every reconnection may be to a Redis that restarted from a snapshot: its run id tells.
    this.redis.on('ready', this.onReady);
    if (this.redis.status === 'ready') await this.checkRestart();
  }

  /** Notes the epoch a script answered with; a new one means Redis lost what this replica had reserved. */
  saw(epoch: string): void {
    const previous = this.epoch;
    this.epoch = epoch;
    if (previous !== undefined && previous !== epoch) void this.restoreOutstanding();
  }

  forget(id: string): void {
    this.outstanding.delete(id);
  }

  /** Starts a new epoch if Redis restarted since a replica last looked (its run id changed). */
  private async checkRestart(): Promise<void> {
    try {
      const info = await this.redis.info('server');
      const runId = /^run_id:(\w+)/m.exec(info)?.[1];
      if (!runId) return;
      const periods = currentPeriods();
      const restarted = await this.redis.modelgateBudgetRestarted(
        ...spentKeys(periods),
        keys.runId,
        keys.epoch,
        keys.epochCreated,
        keys.seeded,
        ...baseKeys(periods),
        keys.reservations,
        keys.expiries,
        keys.reserved,
        keys.keyReserved,
        keys.reservationKeys,
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
  remember(id: string, amount: number, keyId = ''): void {
    const now = Date.now();
    if (this.outstanding.size >= 10_000) for (const [old, { at }] of this.outstanding) if (at < now - RESERVATION_TTL_MS) this.outstanding.delete(old);
    this.outstanding.set(id, { amount, at: now, keyId });
  }

  /** Puts this replica's in-flight reservations back into the epoch Redis moved to. */
  private async restoreOutstanding(): Promise<void> {
    const cutoff = Date.now() - RESERVATION_TTL_MS;
    const entries = [...this.outstanding].filter(([, { at }]) => at >= cutoff).map(([id, { amount, keyId }]) => [id, amount, keyId] as const);
    if (entries.length === 0) return;
    try {
      const restored = await this.redis.modelgateBudgetRestore(
        5 + entries.length,
        keys.reservations,
        keys.expiries,
        keys.reserved,
        keys.keyReserved,
        keys.reservationKeys,
        ...entries.map(([id]) => keys.settled(id)),
        RESERVATION_TTL_MS,
        ...entries.flatMap(([id, amount, keyId]) => [id, amount, keyId]),
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
    const keyUncounted = new Set<string>();
    for (const row of inserted) if (this.uncounted.delete(row.id)) keyUncounted.add(row.id);
    const tagged = inserted.filter((row) => row.budget_epoch !== null && row.cost_nano > 0);
    if (tagged.length === 0) return;
    const [epoch, seeded] = await this.redis.mget(keys.epoch, keys.seeded);
    if (!epoch || seeded !== epoch) return;
    // The keys' counters: rows of a lost epoch, and rows they did not count (KEY_LATE adds only to keys seeded in this epoch).
    const keyLate = tagged.filter((row) => row.budget_epoch !== epoch || keyUncounted.has(row.id));
    if (keyLate.length > 0) {
      const added = await this.redis.modelgateBudgetKeyLate(
        1 + 5 * keyLate.length,
        keys.epoch,
        ...keyLate.flatMap((row) => [keys.keySeeded(row.key_id), ...keySpentKeys(row.key_id, currentPeriods(row.at)), keys.keyLate(row.id)]),
        KEEP_SPEND_S,
        ...keyLate.map((row) => row.cost_nano),
      );
      if (added > 0) this.logger.info({ rows: added }, "budget: costs the keys' counters had not counted were added to them");
    }
    const late = tagged.filter((row) => row.budget_epoch !== epoch);
    if (late.length === 0) return;
    const added = await this.redis.modelgateBudgetLate(
      2 + 4 * late.length,
      keys.epoch,
      keys.seeded,
      ...late.flatMap((row) => {
        const periods = currentPeriods(row.at);
        return [...spentKeys(periods), keys.late(row.id)];
      }),
      KEEP_SPEND_S,
      ...late.flatMap((row) => [row.budget_epoch!, row.cost_nano]),
    );
    if (added > 0) this.logger.warn({ rows: added }, 'budget: costs of a lost epoch written after the rebuild were added to Redis');
  }

  /** Notes rows (with a cost) whose key's counters did not count them, for the late check once they are written. */
  keyUncounted(rows: readonly LedgerRow[]): void {
    for (const row of rows) {
      if (row.costNano <= 0) continue;
      if (this.uncounted.size >= MAX_KEY_UNCOUNTED) this.uncounted.delete(this.uncounted.values().next().value!);
      this.uncounted.add(row.id);
    }
  }

  /**
   * Seeds key `keyId`'s counters in `epoch` from the ledger: after the epoch's own seed delay (rows
   * of a lost epoch still queued on some replica), with this replica's queued rows written first, and
   * read and applied while the ledger's writers wait — so a row is either in the read or, written
   * after, added by the late check. Once per key at a time on this replica; the script lets the
   * first replica count.
   */
  seedKey(epoch: string, keyId: string, created: number, now: number): Promise<void> {
    const id = `${epoch} ${keyId}`;
    let done = this.keySeeding.get(id);
    if (!done) {
      done = this.seedKeyFromLedger(epoch, keyId, created, now).finally(() => this.keySeeding.delete(id));
      this.keySeeding.set(id, done);
    }
    return done;
  }

  private async seedKeyFromLedger(epoch: string, keyId: string, created: number, now: number): Promise<void> {
    const { ledger, history, seedDelayMs } = this.deps;
    const wait = created + seedDelayMs - now;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    await ledger.flush().catch((error: Error) => this.logger.warn({ err: error.message }, "budget: this replica could not write its queued ledger rows before reading a key's spend"));
    const periods = currentPeriods();
    await history.whileWritersWait(async (read) => {
      const spent = await read.keySpend(periods, keyId);
      await this.redis.modelgateBudgetKeySeed(keys.epoch, keys.seeded, ...keySpentKeys(keyId, periods), keys.keySeeded(keyId), epoch, ...PERIODS.map((name) => Math.max(0, spent[name])), KEEP_SPEND_S);
    });
  }

  /**
   * Seeds `epoch` from the ledger, once per replica at a time (every replica that meets it may try;
   * the script lets the first one count). Times are Redis's clock.
   */
  seed(epoch: string, created: number, now: number): Promise<void> {
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
        ...spentKeys(periods),
        ...baseKeys(periods),
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

  async close(): Promise<void> {
    this.redis.off('ready', this.onReady);
    if (this.deps.ledger.onInserted) this.deps.ledger.onInserted = undefined;
    await this.seeding?.done.catch(() => undefined);
  }
}
