// The Redis budget store's keys and Lua scripts (redis-budget.ts says what they are for). Each
// script checks its arguments before it writes anything: Redis does not undo a script that fails
// halfway. All keys share the {budget} hash tag (one Cluster slot, as multi-key scripts need).
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { PERIODS, type Period } from './periods.js';
import type { Periods } from './budget-store.js';

/** A reservation left by a replica that died mid-request is released after this. */
export const RESERVATION_TTL_MS = 15 * 60_000;
/** Spend counters outlive their period by far: a year and a month. */
export const KEEP_SPEND_S = 400 * 86_400;

/** The connection with the scripts defined on it (redis-budget.ts and redis-recovery.ts define them). */
export type Scripted = Redis & {
  modelgateBudgetReserve(...args: Array<string | number>): Promise<Array<number | string>>;
  modelgateBudgetSettle(...args: Array<string | number>): Promise<[number, number, number, string, number, number?, number?, number?]>;
  modelgateBudgetKeySeed(...args: Array<string | number>): Promise<number>;
  modelgateBudgetKeyLate(numberOfKeys: number, ...args: Array<string | number>): Promise<number>;
  modelgateBudgetState(...args: Array<string | number>): Promise<[number, number, number, number, string | null, string, number, number, number]>;
  modelgateBudgetRestarted(...args: Array<string | number>): Promise<number>;
  modelgateBudgetSeed(...args: Array<string | number>): Promise<number>;
  modelgateBudgetLate(numberOfKeys: number, ...args: Array<string | number>): Promise<number>;
  modelgateBudgetRestore(numberOfKeys: number, ...args: Array<string | number>): Promise<number>;
  modelgateBudgetFire(...args: Array<string | number>): Promise<number>;
};

export const keys = {
  spent: (period: Period) => `{budget}:spent:${period.name}:${period.key}`,
  /** What a period's counter held when the current epoch began (a restored snapshot's value, or 0). */
  base: (period: Period) => `{budget}:base:${period.name}:${period.key}`,
  reservations: '{budget}:reservations',
  expiries: '{budget}:reservation-expiries',
  reserved: '{budget}:reserved',
  pause: '{budget}:pause',
  fired: (period: Period, rule: string) => `{budget}:fired:${period.name}:${period.key}:${rule}`,
  settled: (id: string) => `{budget}:settled:${id}`,
  late: (rowId: string) => `{budget}:late:${rowId}`,
  epoch: '{budget}:epoch',
  epochCreated: '{budget}:epoch-created',
  seeded: '{budget}:seeded',
  runId: '{budget}:run-id',
  /** Per-key budgets: what each key's requests in flight reserved (field: key id), and which key each reservation holds. */
  keyReserved: '{budget}:key-reserved',
  reservationKeys: '{budget}:reservation-keys',
  keySpent: (keyId: string, period: Period) => `{budget}:key:${keyId}:spent:${period.name}:${period.key}`,
  /** The epoch whose counters of this key were seeded from the ledger: the key's spend counts only in it. */
  keySeeded: (keyId: string) => `{budget}:key:${keyId}:seeded`,
  keyLate: (rowId: string) => `{budget}:key-late:${rowId}`,
};

/** Stands for "no key" in the key slots of a script that has none to count (never written). */
export const NO_KEY = '';
export const keySpentKeys = (keyId: string, periods: Periods): string[] => PERIODS.map((name) => keys.keySpent(keyId, periods[name]));
/** The per-key KEYS of RESERVE and SETTLE: reserved by key, reservation → key, the key's spent day/week/month, its seeded epoch. */
export const keyKeys = (keyId: string, periods: Periods): string[] => [keys.keyReserved, keys.reservationKeys, ...keySpentKeys(keyId, periods), keys.keySeeded(keyId)];

export const spentKeys = (periods: Periods): string[] => PERIODS.map((name) => keys.spent(periods[name]));
export const baseKeys = (periods: Periods): string[] => PERIODS.map((name) => keys.base(periods[name]));

/** A candidate for a new epoch's id, sent with each script that may create one: unique per process and call. */
const EPOCH_PREFIX = randomBytes(6).toString('hex');
let epochCount = 0;
export function newEpoch(): string {
  return `${EPOCH_PREFIX}-${(epochCount++).toString(36)}`;
}

/** Base values outlive an epoch's seed by far; a day is plenty. */
export const BASE_TTL_MS = 86_400_000;

// Redis's clock, in ms.
const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

// Argument ARGV[i] as a whole, non-negative number, or the script refuses before writing.
const WHOLE = (i: number, name: string) => `
local ${name} = tonumber(ARGV[${i}])
if not ${name} or ${name} < 0 or ${name} % 1 ~= 0 then return redis.error_reply('modelgate budget: ${name} is not a whole amount') end
`;

// A new epoch: its id, when it began, and each current period's counter as it stands (the base a
// seed subtracts); restored reservations of a snapshot are stale, so they go. KEYS at `e`: epoch,
// created, seeded; spent day/week/month at 1..3; base day/week/month at `b`..`b+2`.
const START_EPOCH = (e: number, b: number, epoch: string) => `
redis.call('SET', KEYS[${e}], ${epoch})
redis.call('SET', KEYS[${e + 1}], now)
redis.call('DEL', KEYS[${e + 2}])
for i = 1, 3 do redis.call('SET', KEYS[${b} + i - 1], redis.call('GET', KEYS[i]) or '0', 'PX', ${BASE_TTL_MS}) end
`;

// The current epoch, started (unseeded) if Redis has none.
const EPOCH = (e: number, b: number, candidate: string) => `
local epoch = redis.call('GET', KEYS[${e}])
if not epoch then
  epoch = ${candidate}
  ${START_EPOCH(e, b, 'epoch')}
end
`;

// Releases what a reservation `id` held on its key's budget. KEYS at `k`: reserved by key, reservation → key.
const KEY_RELEASE = (k: number, id: string, held: string) => `
local kid = redis.call('HGET', KEYS[${k + 1}], ${id})
if kid then
  if ${held} and redis.call('HINCRBY', KEYS[${k}], kid, -tonumber(${held})) <= 0 then redis.call('HDEL', KEYS[${k}], kid) end
  redis.call('HDEL', KEYS[${k + 1}], ${id})
end
`;

// Drops reservations past their expiry, on the key's budget too. KEYS[4..6] = reservations,
// expiries, reserved total; at k: reserved by key, reservation → key.
const PURGE = (k: number) => `
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now)) do
  local held = redis.call('HGET', KEYS[4], id)
  if held then
    redis.call('DECRBY', KEYS[6], held); redis.call('HDEL', KEYS[4], id)
    ${KEY_RELEASE(k, 'id', 'held')}
  end
  redis.call('ZREM', KEYS[5], id)
end
`;

// KEYS: spent day/week/month, reservations, expiries, reserved total, pause, settled marker of id,
// epoch, epoch created, seeded, base day/week/month, then the key's (keyKeys): reserved by key,
// reservation → key, the key's spent day/week/month, its seeded epoch. ARGV: id, amount, limit
// day/week/month, ttl ms, epoch candidate, key id ('' for none: the key has no budgets), the key's
// limit day/week/month (-1 for none). → {1, epoch} | {0, epoch, period index, spent, reserved} |
// {2, epoch, pause json} | {3, epoch}: id already settled (released) | {4, epoch, created, now}: not
// seeded yet | {5, epoch, created, now}: the key not seeded in this epoch | {6, epoch, period index,
// the key's spent, the key's reserved}: the key's own budget refuses.
export const RESERVE = `${WHOLE(2, 'amount')}${NOW}${EPOCH(9, 12, 'ARGV[7]')}
if redis.call('GET', KEYS[11]) ~= epoch then
  return {4, epoch, tonumber(redis.call('GET', KEYS[10]) or now), now}
end
local kid = ARGV[8]
for i = 1, 3 do
  if kid ~= '' and not tonumber(ARGV[8 + i]) then return redis.error_reply('modelgate budget: a key limit is not a number') end
end
${PURGE(15)}
if redis.call('EXISTS', KEYS[8]) == 1 then return {3, epoch} end
local pause = redis.call('GET', KEYS[7])
if pause then return {2, epoch, pause} end
local reserved = tonumber(redis.call('GET', KEYS[6]) or '0')
for i = 1, 3 do
  local spent = tonumber(redis.call('GET', KEYS[i]) or '0')
  if spent + reserved + amount > tonumber(ARGV[2 + i]) then return {0, epoch, i, spent, reserved} end
end
if kid ~= '' then
  if redis.call('GET', KEYS[20]) ~= epoch then return {5, epoch, tonumber(redis.call('GET', KEYS[10]) or now), now} end
  local kreserved = tonumber(redis.call('HGET', KEYS[15], kid) or '0')
  for i = 1, 3 do
    local limit = tonumber(ARGV[8 + i])
    if limit >= 0 then
      local spent = tonumber(redis.call('GET', KEYS[16 + i]) or '0')
      if spent + kreserved + amount > limit then return {6, epoch, i, spent, kreserved} end
    end
  end
  redis.call('HINCRBY', KEYS[15], kid, amount)
  redis.call('HSET', KEYS[16], ARGV[1], kid)
end
redis.call('HSET', KEYS[4], ARGV[1], amount)
redis.call('ZADD', KEYS[5], now + tonumber(ARGV[6]), ARGV[1])
redis.call('INCRBY', KEYS[6], amount)
return {1, epoch}
`;

// KEYS: spent day/week/month, reservations, expiries, reserved total, settled marker of id, epoch,
// epoch created, seeded, base day/week/month, then the key's (keyKeys). ARGV: id, actual, keep
// seconds, marker ms, epoch candidate, key id ('' for none). → spend after, per period, the epoch it
// counted in, 1 if the key's counters counted it, and then the key's spend after, per period (they count only in the epoch they were seeded
// in; else the key's seed or the late check counts it). Idempotent per id: a copy that finds the
// marker renews it and counts nothing; the marker, set last once all is counted, keeps whether the
// key counted. Counts in an unseeded epoch too: the seed adds only what the ledger holds outside it.
export const SETTLE = `${WHOLE(2, 'actual')}${NOW}${EPOCH(8, 11, 'ARGV[5]')}${PURGE(14)}
local marker = redis.call('GET', KEYS[7])
if marker then
  redis.call('PEXPIRE', KEYS[7], ARGV[4])
  return {tonumber(redis.call('GET', KEYS[1]) or '0'), tonumber(redis.call('GET', KEYS[2]) or '0'), tonumber(redis.call('GET', KEYS[3]) or '0'), epoch, marker == '2' and 1 or 0}
end
local held = redis.call('HGET', KEYS[4], ARGV[1])
if held then
  redis.call('DECRBY', KEYS[6], held)
  redis.call('HDEL', KEYS[4], ARGV[1])
  redis.call('ZREM', KEYS[5], ARGV[1])
end
${KEY_RELEASE(14, 'ARGV[1]', 'held')}
local after = {}
for i = 1, 3 do
  after[i] = redis.call('INCRBY', KEYS[i], actual)
  redis.call('EXPIRE', KEYS[i], ARGV[3])
end
after[4] = epoch
after[5] = 0
if ARGV[6] ~= '' and redis.call('GET', KEYS[19]) == epoch then
  for i = 1, 3 do
    after[5 + i] = redis.call('INCRBY', KEYS[15 + i], actual)
    redis.call('EXPIRE', KEYS[15 + i], ARGV[3])
  end
  after[5] = 1
end
redis.call('SET', KEYS[7], after[5] == 1 and '2' or '1', 'PX', ARGV[4])
return after
`;

// KEYS: spent day/week/month, reserved total, pause, epoch, epoch created, seeded, base
// day/week/month. ARGV: epoch candidate. → {spent day/week/month, reserved, pause json or false,
// epoch, seeded (1/0), created, now}.
export const STATE = `${NOW}${EPOCH(6, 9, 'ARGV[1]')}
return {tonumber(redis.call('GET', KEYS[1]) or '0'), tonumber(redis.call('GET', KEYS[2]) or '0'), tonumber(redis.call('GET', KEYS[3]) or '0'),
  tonumber(redis.call('GET', KEYS[4]) or '0'), redis.call('GET', KEYS[5]), epoch, redis.call('GET', KEYS[8]) == epoch and 1 or 0,
  tonumber(redis.call('GET', KEYS[7]) or now), now}
`;

// Redis restarted (its run id changed), possibly from a snapshot older than what was counted since:
// a new epoch begins, with the restored counters as its base. A Redis that holds nothing of ours
// (first contact, or everything lost) only learns its run id: the next script starts an epoch.
// KEYS: spent day/week/month, run id, epoch, epoch created, seeded, base day/week/month,
// reservations, expiries, reserved total, reserved by key, reservation → key. ARGV: run id, epoch
// candidate. → 1 if a new epoch began. Each key's counters are seeded again in it (their seeded
// epoch is the old one).
export const RESTARTED = `${NOW}
local known = redis.call('GET', KEYS[4])
if known == ARGV[1] then return 0 end
redis.call('SET', KEYS[4], ARGV[1])
if not known and not redis.call('GET', KEYS[5]) then return 0 end
${START_EPOCH(5, 8, 'ARGV[2]')}
redis.call('DEL', KEYS[11], KEYS[12], KEYS[13], KEYS[14], KEYS[15])
return 1
`;

// KEYS: spent day/week/month, base day/week/month, epoch, seeded, pause. ARGV: epoch, ledger total
// day/week/month (outside this epoch), keep seconds, pause json ('' for none), pause ttl ms, pause
// until. → 1 if it seeded; 0 if the epoch changed or another replica seeded it first. Each counter
// becomes the ledger's total plus what this epoch counted (counter − base). The pause is restored
// unless a longer one holds.
export const SEED = `${WHOLE(2, 'day')}${WHOLE(3, 'week')}${WHOLE(4, 'month')}
if redis.call('GET', KEYS[7]) ~= ARGV[1] or redis.call('GET', KEYS[8]) == ARGV[1] then return 0 end
for i = 1, 3 do
  redis.call('INCRBY', KEYS[i], tonumber(ARGV[1 + i]) - tonumber(redis.call('GET', KEYS[3 + i]) or '0'))
  redis.call('EXPIRE', KEYS[i], ARGV[5])
end
if ARGV[6] ~= '' then
  local current = redis.call('GET', KEYS[9])
  if not current or cjson.decode(current)['until'] < tonumber(ARGV[8]) then redis.call('SET', KEYS[9], ARGV[6], 'PX', ARGV[7]) end
end
redis.call('SET', KEYS[8], ARGV[1])
return 1
`;

// Rows counted in an epoch Redis has lost, written to the ledger after the current epoch was seeded
// (so the seed could not see them): their costs are added now, once each. KEYS: epoch, seeded, then
// per row its spent day/week/month and its late marker. ARGV: keep seconds, then per row its epoch
// and cost. → rows added.
export const LATE = `
local epoch = redis.call('GET', KEYS[1])
if not epoch or redis.call('GET', KEYS[2]) ~= epoch then return 0 end
local added = 0
for r = 0, (#KEYS - 2) / 4 - 1 do
  local cost = tonumber(ARGV[3 + 2 * r])
  if ARGV[2 + 2 * r] ~= epoch and cost and cost > 0 and cost % 1 == 0 and redis.call('SET', KEYS[6 + 4 * r], '1', 'PX', ${BASE_TTL_MS}, 'NX') then
    for i = 0, 2 do
      redis.call('INCRBY', KEYS[3 + 4 * r + i], cost)
      redis.call('EXPIRE', KEYS[3 + 4 * r + i], ARGV[1])
    end
    added = added + 1
  end
end
return added
`;

// A replica's reservations of requests still in flight, after Redis lost them: held again, on their
// key's budget too, unless settled meanwhile. KEYS: reservations, expiries, reserved total, reserved
// by key, reservation → key, then each one's settled marker. ARGV: ttl ms, then id, amount and key
// id ('' for none) of each. → reservations restored.
export const RESTORE = `${NOW}
local restored = 0
for r = 0, #KEYS - 6 do
  local id = ARGV[2 + 3 * r]
  local amount = tonumber(ARGV[3 + 3 * r])
  local kid = ARGV[4 + 3 * r]
  if amount and redis.call('HEXISTS', KEYS[1], id) == 0 and redis.call('EXISTS', KEYS[6 + r]) == 0 then
    redis.call('HSET', KEYS[1], id, amount)
    redis.call('ZADD', KEYS[2], now + tonumber(ARGV[1]), id)
    redis.call('INCRBY', KEYS[3], amount)
    if kid ~= '' then
      redis.call('HINCRBY', KEYS[4], kid, amount)
      redis.call('HSET', KEYS[5], id, kid)
    end
    restored = restored + 1
  end
end
return restored
`;

// KEYS: fired marker, pause. ARGV: fired at (ms), marker ttl ms, pause json ('' for none), pause
// ttl ms, pause until. → 1 for the first caller. The pause is written first: should it fail, the
// script stops before the marker, and the rule fires on a later call.
export const FIRE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if ARGV[3] ~= '' then
  local current = redis.call('GET', KEYS[2])
  if not current or cjson.decode(current)['until'] < tonumber(ARGV[5]) then redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4]) end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`;

// A key's counters, seeded in the current epoch from the ledger (read while the ledger's writers
// wait): its settlements before that counted nowhere but the ledger, so each counter becomes the
// ledger's total. KEYS: epoch, seeded, the key's spent day/week/month, its seeded epoch. ARGV: epoch,
// ledger total day/week/month, keep seconds. → 1 if it seeded; 0 if the epoch changed, is not seeded
// itself, or another replica seeded the key first.
export const KEY_SEED = `${WHOLE(2, 'day')}${WHOLE(3, 'week')}${WHOLE(4, 'month')}
if redis.call('GET', KEYS[1]) ~= ARGV[1] or redis.call('GET', KEYS[2]) ~= ARGV[1] or redis.call('GET', KEYS[6]) == ARGV[1] then return 0 end
for i = 1, 3 do redis.call('SET', KEYS[2 + i], ARGV[1 + i], 'EX', ARGV[5]) end
redis.call('SET', KEYS[6], ARGV[1], 'EX', ARGV[5])
return 1
`;

// Rows written to the ledger after their key was seeded in the current epoch whose cost its
// counters did not count (settled before the seed, or in an epoch Redis has lost): added now, once
// each. KEYS: epoch, then per row the key's seeded epoch, spent day/week/month, and the row's
// key-late marker. ARGV: keep seconds, then per row its cost. → rows added.
export const KEY_LATE = `
local epoch = redis.call('GET', KEYS[1])
if not epoch then return 0 end
local added = 0
for r = 0, (#KEYS - 1) / 5 - 1 do
  local k = 2 + 5 * r
  local cost = tonumber(ARGV[2 + r])
  if cost and cost > 0 and cost % 1 == 0 and redis.call('GET', KEYS[k]) == epoch and redis.call('SET', KEYS[k + 4], '1', 'PX', ${BASE_TTL_MS}, 'NX') then
    for i = 1, 3 do
      redis.call('INCRBY', KEYS[k + i], cost)
      redis.call('EXPIRE', KEYS[k + i], ARGV[1])
    end
    added = added + 1
  end
end
return added
`;
