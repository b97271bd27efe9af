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
// All keys share the {budget} hash tag (one Cluster slot, as multi-key scripts need).
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { PERIODS, type Period } from './periods.js';
import type { Amounts, BudgetSnapshot, BudgetStore, PauseState, Periods, ReserveResult } from './budget-store.js';

const RESERVATION_TTL_MS = 15 * 60_000;
/**
 * How long a `settled:<id>` marker outlives the last copy of its settlement that reached Redis
 * (each copy renews it). Copies run within moments of each other: those queued on the socket run
 * right after the first, and a kept settlement is re-sent only once Redis answers again.
 */
const SETTLED_MARKER_MS = 15 * 60_000;
const RETRY_MS = 1000;
const KEEP_SPEND_S = 400 * 86_400;

const keys = {
  spent: (period: Period) => `{budget}:spent:${period.name}:${period.key}`,
  reservations: '{budget}:reservations',
  expiries: '{budget}:reservation-expiries',
  reserved: '{budget}:reserved',
  pause: '{budget}:pause',
  fired: (period: Period, rule: string) => `{budget}:fired:${period.name}:${period.key}:${rule}`,
  settled: (id: string) => `{budget}:settled:${id}`,
};

// Drops reservations past their expiry. KEYS[4..6] = reservations, expiries, reserved total.
const PURGE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now)) do
  local held = redis.call('HGET', KEYS[4], id)
  if held then redis.call('DECRBY', KEYS[6], held); redis.call('HDEL', KEYS[4], id) end
  redis.call('ZREM', KEYS[5], id)
end
`;

// KEYS: spent day/week/month, reservations, expiries, reserved total, pause, settled marker of id.
// ARGV: id, amount, limit day/week/month, ttl ms.
// → {1} | {0, period index, spent, reserved} | {2, pause json} | {3}: id already settled (released).
const RESERVE = `${PURGE}
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

// KEYS: spent day/week/month, reservations, expiries, reserved total, settled marker of id.
// ARGV: id, actual, keep seconds, marker ms. → spend after, per period. Idempotent per id: a copy
// that finds the marker renews it and counts nothing.
const SETTLE = `${PURGE}
if redis.call('SET', KEYS[7], '1', 'PX', ARGV[4], 'NX') == false then
  redis.call('PEXPIRE', KEYS[7], ARGV[4])
  return {tonumber(redis.call('GET', KEYS[1]) or '0'), tonumber(redis.call('GET', KEYS[2]) or '0'), tonumber(redis.call('GET', KEYS[3]) or '0')}
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
return after
`;

// KEYS: fired marker, pause. ARGV: fired at (ms), marker ttl ms, pause json ('' for none), pause
// ttl ms. → 1 for the first caller. The pause is written first: should it fail, the script stops
// before the marker, and the rule fires on a later call.
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
  modelgateBudgetSettle(...args: Array<string | number>): Promise<number[]>;
  modelgateBudgetFire(...args: Array<string | number>): Promise<number>;
};

interface Unsettled {
  id: string;
  actual: number;
  periods: Periods;
}

export class RedisBudget implements BudgetStore {
  private readonly redis: Scripted;
  private readonly unsettled: Unsettled[] = [];
  private readonly timer: NodeJS.Timeout;
  private retrying: Promise<void> | undefined;

  constructor(
    redis: Redis,
    private readonly logger: Logger,
  ) {
    redis.defineCommand('modelgateBudgetReserve', { numberOfKeys: 8, lua: RESERVE });
    redis.defineCommand('modelgateBudgetSettle', { numberOfKeys: 7, lua: SETTLE });
    redis.defineCommand('modelgateBudgetFire', { numberOfKeys: 2, lua: FIRE });
    this.redis = redis as Scripted;
    this.timer = setInterval(() => void this.retry(), RETRY_MS);
    this.timer.unref();
  }

  private spentKeys(periods: Periods): string[] {
    return PERIODS.map((name) => keys.spent(periods[name]));
  }

  async reserve(id: string, amount: number, periods: Periods, limits: Amounts): Promise<ReserveResult> {
    let result: [number, ...Array<number | string>];
    // Without a connection and without an offline queue (the gateway's connection) ioredis would
    // refuse at once: the script never runs, and there is nothing to release.
    if (this.redis.status !== 'ready' && !this.redis.options.enableOfflineQueue) throw new Error(`budget: Redis is not connected (${this.redis.status})`);
    try {
      result = await this.redis.modelgateBudgetReserve(
        ...this.spentKeys(periods),
        keys.reservations,
        keys.expiries,
        keys.reserved,
        keys.pause,
        keys.settled(id),
        id,
        amount,
        ...PERIODS.map((name) => limits[name]),
        RESERVATION_TTL_MS,
      );
    } catch (error) {
      // The script may still run (a timeout on our side, not on Redis's): release the reservation
      // it would make, by a settlement of $0 kept until it lands. The caller refuses the request.
      this.keep({ id, actual: 0, periods }, error as Error, 'budget: reservation failed, its release is kept for retry');
      throw error;
    }
    if (result[0] === 1) return { ok: true };
    if (result[0] === 2) return { ok: false, reason: 'paused', pause: JSON.parse(String(result[1])) as PauseState };
    if (result[0] === 3) throw new Error(`budget: reservation ${id} was already settled`);
    return { ok: false, reason: 'limit', period: PERIODS[Number(result[1]) - 1]!, spent: Number(result[2]), reserved: Number(result[3]) };
  }

  async settle(id: string, actual: number, periods: Periods): Promise<Amounts> {
    try {
      return await this.send({ id, actual, periods });
    } catch (error) {
      this.keep({ id, actual, periods }, error as Error, 'budget: settlement kept for retry, Redis failed');
      throw error;
    }
  }

  private keep(entry: Unsettled, error: Error, message: string): void {
    this.unsettled.push(entry);
    this.logger.warn({ err: error.message, unsettled: this.unsettled.length }, message);
  }

  private async send({ id, actual, periods }: Unsettled): Promise<Amounts> {
    const after = await this.redis.modelgateBudgetSettle(
      ...this.spentKeys(periods),
      keys.reservations,
      keys.expiries,
      keys.reserved,
      keys.settled(id),
      id,
      actual,
      KEEP_SPEND_S,
      SETTLED_MARKER_MS,
    );
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

  async snapshot(periods: Periods): Promise<BudgetSnapshot> {
    const [day, week, month, reserved, pause] = await this.redis.mget(...this.spentKeys(periods), keys.reserved, keys.pause);
    return {
      spent: { day: Number(day ?? 0), week: Number(week ?? 0), month: Number(month ?? 0) },
      reserved: Number(reserved ?? 0),
      pause: pause ? (JSON.parse(pause) as PauseState) : undefined,
    };
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
    return fired === 1;
  }

  async resume(): Promise<boolean> {
    return (await this.redis.del(keys.pause)) === 1;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.retry();
    if (this.unsettled.length > 0) {
      const nano = this.unsettled.reduce((sum, entry) => sum + entry.actual, 0);
      this.logger.error({ settlements: this.unsettled.length, usd: nano / 1e9 }, 'budget: settlements never reached Redis');
    }
  }
}
