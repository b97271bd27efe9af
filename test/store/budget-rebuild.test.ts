// A Redis that loses its state — everything (restart without persistence, FLUSHALL, failover to an
// empty replica) or what it counted since its last snapshot (a restart from RDB) — does not reset
// or roll back anyone's spend: the Redis budget store rebuilds the current periods from the ledger,
// every cost exactly once — counted before the loss, written to the database after it (even after
// the rebuild), settled in the new epoch before the rebuild, or kept through a long outage — and
// restores the pause, the alert rules that fired, and the reservations of requests in flight.
// Drives the store itself over PostgreSQL and a Redis prefix (or a Redis of the test's own).
import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { currentPeriods } from '../../plugins/cost/periods.js';
import type { LedgerRow } from '../../plugins/cost/ledger-row.js';
import type { RedisBudget } from '../../plugins/cost/redis-budget.js';
import { LedgerWriter } from '../../plugins/cost/ledger.js';
import { budgetParts, redisBudget, type BudgetParts } from '../helpers/budget.js';
import { flushPrefix, REDIS_HOST, REDIS_PORT, testPrefix } from '../helpers/redis.js';
import { startPrivateRedis } from '../helpers/private-redis.js';
import { pino } from 'pino';

const LIMITS = { day: 1e12, week: 1e12, month: 1e12 };
const prefixes: string[] = [];
t.teardown(async () => {
  for (const prefix of prefixes) await flushPrefix(prefix);
});

function row(costNano: number, at = Date.now()): LedgerRow {
  return { id: randomUUID(), at, requestId: 'r', kind: 'request', tenant: 'default', keyId: 'k1', provider: 'openai', model: 'm', status: 200, errorCode: null, cacheHit: false, promptTokens: 1, completionTokens: 1, cachedTokens: 0, costNano, savedNano: 0, latencyMs: 5, ttftMs: null, epoch: null };
}

async function setup(t: Test, options: { port?: number; parts?: BudgetParts; prefix?: string } = {}): Promise<{ parts: BudgetParts; budget: RedisBudget; prefix: string; redis: Redis }> {
  const prefix = options.prefix ?? testPrefix();
  prefixes.push(prefix);
  const redis = new Redis({ host: REDIS_HOST, port: options.port ?? REDIS_PORT, keyPrefix: prefix });
  t.teardown(() => redis.disconnect());
  const parts = options.parts ?? (await budgetParts(t, 'postgres'));
  return { parts, budget: await redisBudget(t, redis, parts), prefix, redis };
}

t.test('costs counted before the loss, written after it, and settled in the new epoch before the rebuild each count once', async (t) => {
  const { parts, budget, prefix } = await setup(t);
  const periods = currentPeriods();
  t.same(await budget.reserve('r1', 1000, periods, LIMITS), { ok: true }, 'a fresh Redis is seeded (with nothing) first');
  await budget.settle('r1', 300, periods, [row(300)]);
  await parts.ledger.flush();
  // Counted in Redis, still queued here when Redis is lost: written by the timer before the rebuild reads.
  await budget.settle('r2', 50, periods, [row(50)]);

  await flushPrefix(prefix);
  // Settled after the loss, before anyone rebuilt: counted in the new epoch, and in the ledger.
  await budget.settle('r3', 200, periods, [row(200)]);
  t.equal((await budget.snapshot(periods)).spent.day, 550, 'rebuilt: 300 + 50 from the ledger, 200 of the new epoch, none twice');
  t.same(await budget.reserve('r4', 1000, periods, LIMITS), { ok: true });
  await budget.settle('r4', 5, periods, [row(5)]);
  t.same((await budget.snapshot(periods)).spent, { day: 555, week: 555, month: 555 });
});

t.test('a rebuilt budget refuses what the lost one would have refused', async (t) => {
  const { budget, prefix } = await setup(t);
  const periods = currentPeriods();
  const limits = { day: 1000, week: 1e12, month: 1e12 };
  await budget.reserve('r1', 900, periods, limits);
  await budget.settle('r1', 900, periods, [row(900)]);
  await flushPrefix(prefix);
  t.match(await budget.reserve('r2', 200, periods, limits), { ok: false, reason: 'limit', period: 'day', spent: 900 }, 'not reset to $0');
});

t.test('the pause and the fired alert rules come back with the spend', async (t) => {
  const { budget, prefix } = await setup(t);
  const periods = currentPeriods();
  const pause = { period: 'day', periodKey: periods.day.key, threshold: 0.8, until: periods.day.resetsAt } as const;
  await budget.snapshot(periods);
  t.equal(await budget.fireOnce(periods.day, '0.5:email'), true);
  t.equal(await budget.fireOnce(periods.day, '0.8:pause', pause), true);
  await flushPrefix(prefix);
  t.match(await budget.reserve('r1', 10, periods, LIMITS), { ok: false, reason: 'paused', pause }, 'still paused');
  t.equal(await budget.fireOnce(periods.day, '0.5:email'), false, 'a rule that fired does not fire again');
  t.equal(await budget.resume(), true);
  t.same(await budget.reserve('r2', 10, periods, LIMITS), { ok: true });
});

t.test('a Redis restarted from an older snapshot (its run id changed) is rebuilt, not left rolled back', async (t) => {
  const server = await startPrivateRedis({ persist: true });
  t.teardown(() => server.stop());
  const { budget, redis, parts } = await setup(t, { port: server.port });
  const periods = currentPeriods();
  await budget.reserve('r1', 1000, periods, LIMITS);
  await budget.settle('r1', 100, periods, [row(100)]);
  await redis.save();
  await budget.reserve('r2', 1000, periods, LIMITS);
  await budget.settle('r2', 50, periods, [row(50)]);
  await parts.ledger.flush();
  // Asked the moment the connection is ready again, in the same tick as the store's restart check
  // (whose script is sent only after Redis answered INFO): the first to ask must not read the
  // rolled-back counters either. Before the store waited for its check, this read $100 every time.
  const first = new Promise<number>((resolve, reject) => {
    redis.once('ready', () => budget.snapshot(periods).then((snapshot) => resolve(snapshot.spent.day), reject));
  });
  await server.restart();
  // The snapshot holds $100 of the $150; the ledger holds all of it.
  t.equal(await first, 150, 'rebuilt from the ledger, for the first request after the reconnection too');
  t.equal((await budget.snapshot(periods)).spent.day, 150, 'and after');
});

t.test('rows of a lost epoch written only after the rebuild (their replica could not write in time) are added, once', async (t) => {
  const { budget, parts, prefix } = await setup(t);
  // Another replica: its own ledger writer, which will not write until told to.
  const slow = new LedgerWriter(parts.store, pino({ level: 'silent' }), { flushMs: 3_600_000, maxBacklog: 1000 });
  t.teardown(() => slow.close());
  const other = await setup(t, { parts: { ...parts, ledger: slow }, prefix });
  const periods = currentPeriods();
  await budget.reserve('r1', 1000, periods, LIMITS);
  await other.budget.settle('r-slow', 70, periods, [row(70)]);
  await budget.settle('r1', 30, periods, [row(30)]);
  await flushPrefix(prefix);
  t.equal((await budget.snapshot(periods)).spent.day, 30, 'the rebuild saw what reached the ledger');
  await slow.flush();
  await slow.flush();
  t.equal((await budget.snapshot(periods)).spent.day, 100, 'the late row was added when it was written');
  await slow.flush();
  t.equal((await budget.snapshot(periods)).spent.day, 100, 'and only once');
});

t.test('a settlement kept through a long outage (its time 20 minutes before the new epoch) is not counted twice', async (t) => {
  const { budget, parts } = await setup(t);
  const periods = currentPeriods();
  // Settled into a fresh epoch, with the time it had when it was first made.
  await budget.settle('old', 100, periods, [row(100, Date.now() - 20 * 60_000)]);
  await parts.ledger.flush();
  t.equal((await budget.snapshot(periods)).spent.day, 100);
});

t.test('reservations of requests in flight are put back after Redis lost them', async (t) => {
  const { budget, prefix } = await setup(t);
  const periods = currentPeriods();
  await budget.reserve('in-flight', 400, periods, LIMITS);
  await flushPrefix(prefix);
  await budget.snapshot(periods);
  for (let i = 0; i < 50 && (await budget.snapshot(periods)).reserved === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  t.equal((await budget.snapshot(periods)).reserved, 400, 'held again');
  await budget.settle('in-flight', 100, periods, [row(100)]);
  t.match(await budget.snapshot(periods), { reserved: 0, spent: { day: 100 } }, 'and released by its settlement');
});

t.test('an amount that is not a whole number of nano-dollars is refused before anything is written', async (t) => {
  const { budget } = await setup(t);
  const periods = currentPeriods();
  await budget.reserve('r1', 500, periods, LIMITS);
  await t.rejects(budget.settle('r1', Number.NaN, periods), /cannot settle NaN/);
  t.match(await budget.snapshot(periods), { reserved: 500, spent: { day: 0 } }, 'the reservation still held, nothing counted');
});
