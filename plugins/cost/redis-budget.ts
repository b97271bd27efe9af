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
// Redis may lose everything (a restart without persistence, a flush, a failover to an empty
// replica); the ledger in the database has every settled cost. Redis counts spend in an *epoch*: a
// random id the first script to find none creates. Each ledger row records the epoch its cost was
// counted in. An epoch starts unseeded: reservations wait while one replica adds to Redis what the
// ledger holds for the current periods outside this epoch (after waiting one ledger flush interval,
// so rows settled before the loss are written), restores the pause and the fired alert rules, and
// marks the epoch seeded. Costs settled meanwhile count in the new epoch and are not added twice.
// All keys share the {budget} hash tag (one Cluster slot, as multi-key scripts need).
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { PERIODS, currentPeriods, type Period } from './periods.js';
import type { Amounts, BudgetSnapshot, BudgetStore, PauseState, Periods, ReserveResult } from './budget-store.js';
import type { LedgerRow } from './ledger-row.js';
import type { LedgerWriter } from './ledger.js';
import type { SpendHistory } from './spend-history.js';
import type { BudgetRecords } from './budget-records.js';

const RESERVATION_TTL_MS = 15 * 60_000;
/**
 * How long a `settled:<id>` marker outlives the last copy of its settlement that reached Redis
 * (each copy renews it). Copies run within moments of each other: those queued on the socket run
 * right after the first, and a kept settlement is re-sent only once Redis answers again.
 */
const SETTLED_MARKER_MS = 15 * 60_000;
const RETRY_MS = 1000;
const KEEP_SPEND_S = 400 * 86_400;
/** Ledger rows counted in an epoch are looked for from its creation minus this: replicas' clocks may differ from Redis's. */
const CLOCK_SKEW_MS = 10 * 60_000;
/** A reservation that finds its epoch unseeded seeds it and tries again; after this many epochs in a row it gives up. */
const SEED_ATTEMPTS = 3;

const keys = {
  spent: (period: Period) => `{budget}:spent:${period.name}:${period.key}`,
  reservations: '{budget}:reservations',
  expiries: '{budget}:reservation-expiries',
  reserved: '{budget}:reserved',
  pause: '{budget}:pause',
  fired: (period: Period, rule: string) => `{budget}:fired:${period.name}:${period.key}:${rule}`,
  settled: (id: string) => `{budget}:settled:${id}`,
  epoch: '{budget}:epoch',
  epochCreated: '{budget}:epoch-created',
  seeded: '{budget}:seeded',
};

// Redis's clock, in ms.
const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

// The current epoch, created (unseeded) if Redis has none. KEYS[e], KEYS[c] = epoch, its creation time.
const EPOCH = (e: number, c: number, candidate: string) => `
local epoch = redis.call('GET', KEYS[${e}])
if not epoch then
  epoch = ${candidate}
  redis.call('SET', KEYS[${e}], epoch)
  redis.call('SET', KEYS[${c}], now)
end
`;

// Drops reservations past their expiry. KEYS[4..6] = reservations, expiries, reserved total.
const PURGE = `
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now)) do
  local held = redis.call('HGET', KEYS[4], id)
  if held then redis.call('DECRBY', KEYS[6], held); redis.call('HDEL', KEYS[4], id) end
  redis.call('ZREM', KEYS[5], id)
end
`;

// KEYS: spent day/week/month, reservations, expiries, reserved total, pause, settled marker of id,
// epoch, epoch created, seeded. ARGV: id, amount, limit day/week/month, ttl ms, epoch candidate.
// → {1} | {0, period index, spent, reserved} | {2, pause json} | {3}: id already settled (released)
// | {4, epoch, created, now}: the epoch is not seeded yet.
const RESERVE = `${NOW}${EPOCH(9, 10, 'ARGV[7]')}
if redis.call('GET', KEYS[11]) ~= epoch then
  return {4, epoch, tonumber(redis.call('GET', KEYS[10]) or now), now}
end
${PURGE}
if redis.call('EXISTS', KEYS[8]) == 1 then return {3} end
local pause = redis.call('GET', KEYS[7])
if pause then return {2, pause} end
local reserved = tonumber(redis.call('GET', KEYS[6]) or '0')
local amount = tonumber(ARGV[2])
for i = 1, 3 do
  local spent = tonumber(redis.call('GET', KEYS[i]) or '0')
  if spent + reserved + amount > tonumber(ARGV[2 + i]) then return {0, i, spent, reserved} end
end
redis.call('HSET', KEYS[4], ARGV[1], amount)
redis.call('ZADD', KEYS[5], now + tonumber(ARGV[6]), ARGV[1])
redis.call('INCRBY', KEYS[6], amount)
return {1}
`;

// KEYS: spent day/week/month, reservations, expiries, reserved total, settled marker of id, epoch,
// epoch created. ARGV: id, actual, keep seconds, marker ms, epoch candidate. → spend after, per
// period, and the epoch it counted in. Idempotent per id: a copy that finds the marker renews it
// and counts nothing. Counts in an unseeded epoch too: the seed adds only what other epochs counted.
const SETTLE = `${NOW}${EPOCH(8, 9, 'ARGV[5]')}${PURGE}
if redis.call('SET', KEYS[7], '1', 'PX', ARGV[4], 'NX') == false then
  redis.call('PEXPIRE', KEYS[7], ARGV[4])
  return {tonumber(redis.call('GET', KEYS[1]) or '0'), tonumber(redis.call('GET', KEYS[2]) or '0'), tonumber(redis.call('GET', KEYS[3]) or '0'), epoch}
end
local held = redis.call('HGET', KEYS[4], ARGV[1])
if held then
  redis.call('DECRBY', KEYS[6], held)
  redis.call('HDEL', KEYS[4], ARGV[1])
  redis.call('ZREM', KEYS[5], ARGV[1])
end
local after = {}
for i = 1, 3 do
  after[i] = redis.call('INCRBY', KEYS[i], ARGV[2])
  redis.call('EXPIRE', KEYS[i], ARGV[3])
end
after[4] = epoch
return after
`;

// KEYS: spent day/week/month, reserved total, pause, epoch, epoch created, seeded. ARGV: epoch
// candidate. → {spent day/week/month, reserved, pause json or false, epoch, seeded (1/0), created, now}.
const STATE = `${NOW}${EPOCH(6, 7, 'ARGV[1]')}
return {tonumber(redis.call('GET', KEYS[1]) or '0'), tonumber(redis.call('GET', KEYS[2]) or '0'), tonumber(redis.call('GET', KEYS[3]) or '0'),
  tonumber(redis.call('GET', KEYS[4]) or '0'), redis.call('GET', KEYS[5]), epoch, redis.call('GET', KEYS[8]) == epoch and 1 or 0,
  tonumber(redis.call('GET', KEYS[7]) or now), now}
`;

// KEYS: spent day/week/month, epoch, seeded, pause. ARGV: epoch, add day/week/month, keep seconds,
// pause json ('' for none), pause ttl ms, pause until. → 1 if it seeded, 0 if the epoch changed or
// another replica seeded it first. The pause is restored unless a longer one holds.
const SEED = `
if redis.call('GET', KEYS[4]) ~= ARGV[1] or redis.call('GET', KEYS[5]) == ARGV[1] then return 0 end
for i = 1, 3 do
  redis.call('INCRBY', KEYS[i], ARGV[1 + i])
  redis.call('EXPIRE', KEYS[i], ARGV[5])
end
if ARGV[6] ~= '' then
  local current = redis.call('GET', KEYS[6])
  if not current or cjson.decode(current)['until'] < tonumber(ARGV[8]) then redis.call('SET', KEYS[6], ARGV[6], 'PX', ARGV[7]) end
end
redis.call('SET', KEYS[5], ARGV[1])
return 1
`;

// KEYS: fired marker, pause. ARGV: fired at (ms), marker ttl ms, pause json ('' for none), pause
// ttl ms, pause until. → 1 for the first caller. The pause is written first: should it fail, the
// script stops before the marker, and the rule fires on a later call.
const FIRE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if ARGV[3] ~= '' then
  local current = redis.call('GET', KEYS[2])
  if not current or cjson.decode(current)['until'] < tonumber(ARGV[5]) then redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4]) end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`;

type Scripted = Redis & {
  modelgateBudgetReserve(...args: Array<string | number>): Promise<[number, ...Array<number | string>]>;
  modelgateBudgetSettle(...args: Array<string | number>): Promise<[number, number, number, string]>;
  modelgateBudgetState(...args: Array<string | number>): Promise<[number, number, number, number, string | null, string, number, number, number]>;
  modelgateBudgetSeed(...args: Array<string | number>): Promise<number>;
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

  constructor(
    redis: Redis,
    private readonly logger: Logger,
    private readonly deps: RedisBudgetDeps,
  ) {
    redis.defineCommand('modelgateBudgetReserve', { numberOfKeys: 11, lua: RESERVE });
    redis.defineCommand('modelgateBudgetSettle', { numberOfKeys: 9, lua: SETTLE });
    redis.defineCommand('modelgateBudgetState', { numberOfKeys: 8, lua: STATE });
    redis.defineCommand('modelgateBudgetSeed', { numberOfKeys: 6, lua: SEED });
    redis.defineCommand('modelgateBudgetFire', { numberOfKeys: 2, lua: FIRE });
    this.redis = redis as Scripted;
    this.timer = setInterval(() => void this.retry(), RETRY_MS);
    this.timer.unref();
  }

  private spentKeys(periods: Periods): string[] {
    return PERIODS.map((name) => keys.spent(periods[name]));
  }

  async reserve(id: string, amount: number, periods: Periods, limits: Amounts): Promise<ReserveResult> {
    // Without a connection and without an offline queue (the gateway's connection) ioredis would
    // refuse at once: the script never runs, and there is nothing to release.
    if (this.redis.status !== 'ready' && !this.redis.options.enableOfflineQueue) throw new Error(`budget: Redis is not connected (${this.redis.status})`);
    for (let attempt = 1; ; attempt++) {
      let result: [number, ...Array<number | string>];
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
      if (result[0] === 1) return { ok: true };
      if (result[0] === 2) return { ok: false, reason: 'paused', pause: JSON.parse(String(result[1])) as PauseState };
      if (result[0] === 3) throw new Error(`budget: reservation ${id} was already settled`);
      if (result[0] === 4) {
        if (attempt >= SEED_ATTEMPTS) throw new Error('budget: Redis keeps losing its state; not reserving');
        await this.seed(String(result[1]), Number(result[2]), Number(result[3]));
        continue;
      }
      return { ok: false, reason: 'limit', period: PERIODS[Number(result[1]) - 1]!, spent: Number(result[2]), reserved: Number(result[3]) };
    }
  }

  async settle(id: string, actual: number, periods: Periods, rows: LedgerRow[] = []): Promise<Amounts> {
    try {
      return await this.send({ id, actual, periods, rows });
    } catch (error) {
      this.keep({ id, actual, periods, rows }, error as Error, 'budget: settlement kept for retry, Redis failed');
      throw error;
    }
  }

  private keep(entry: Unsettled, error: Error, message: string): void {
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
      id,
      actual,
      KEEP_SPEND_S,
      SETTLED_MARKER_MS,
      newEpoch(),
    );
    for (const row of rows) row.epoch = String(after[3]);
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
      if (this.unsettled.length === 0) this.logger.info('budget: every kept settlement reached Redis');
    }
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
    this.logger.warn({ epoch }, 'budget: Redis holds no budget state (restarted, flushed or new); rebuilding it from the ledger');
    // Rows settled before the loss, still queued on some replica, are written within one flush interval.
    const wait = created + seedDelayMs - now;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    await ledger.flush().catch((error: Error) => this.logger.warn({ err: error.message }, 'budget: this replica could not write its queued ledger rows before the rebuild'));
    const periods = currentPeriods();
    const since = created - CLOCK_SKEW_MS;
    const [spent, pause, fired] = await Promise.all([
      history.periodSpend(periods, { id: epoch, since }),
      records.pause(),
      records.fired(PERIODS.map((name) => `${name}:${periods[name].key}`)),
    ]);
    // Fired rules first: once the epoch is seeded, settlements evaluate alert rules against them.
    if (fired.length > 0) {
      const restore = this.redis.multi();
      for (const { period, rule } of fired) {
        const name = period.slice(0, period.indexOf(':')) as keyof Periods;
        const target = periods[name];
        if (target) restore.set(keys.fired(target, rule), String(Date.now()), 'PX', Math.max(1000, target.resetsAt - Date.now() + 86_400_000), 'NX');
      }
      await restore.exec();
    }
    const seeded = await this.redis.modelgateBudgetSeed(
      ...this.spentKeys(periods),
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
    if (seeded === 1) this.logger.info({ epoch, spentUsd: { day: spent.day / 1e9, week: spent.week / 1e9, month: spent.month / 1e9 }, paused: pause !== undefined, firedRules: fired.length }, 'budget: rebuilt from the ledger');
  }

  /** Where the budgets stand; an unseeded epoch is seeded first, so a Redis that lost its state never shows $0. */
  async snapshot(periods: Periods): Promise<BudgetSnapshot> {
    let state = await this.state(periods);
    if (state[6] !== 1) {
      await this.seed(state[5], state[7], state[8]);
      state = await this.state(periods);
    }
    const [day, week, month, reserved, pause] = state;
    return { spent: { day: Number(day), week: Number(week), month: Number(month) }, reserved: Number(reserved), pause: pause ? (JSON.parse(pause) as PauseState) : undefined };
  }

  private state(periods: Periods) {
    return this.redis.modelgateBudgetState(...this.spentKeys(periods), keys.reserved, keys.pause, keys.epoch, keys.epochCreated, keys.seeded, newEpoch());
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
