// A Redis that loses everything (restart without persistence, FLUSHALL, failover to an empty
// replica) does not reset anyone's spend: the Redis budget store rebuilds the current periods from
// the ledger — every cost exactly once, whether it was counted before the loss, written to the
// database after it, or settled in the new epoch before the rebuild — and restores the pause and
// the alert rules that fired. Drives the store itself over PostgreSQL and a Redis prefix.
import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { currentPeriods } from '../../plugins/cost/periods.js';
import type { LedgerRow } from '../../plugins/cost/ledger-row.js';
import { budgetParts, redisBudget, type BudgetParts } from '../helpers/budget.js';
import { flushPrefix, REDIS_HOST, REDIS_PORT, testPrefix } from '../helpers/redis.js';

const LIMITS = { day: 1e12, week: 1e12, month: 1e12 };
const prefixes: string[] = [];
t.teardown(async () => {
  for (const prefix of prefixes) await flushPrefix(prefix);
});

function row(costNano: number): LedgerRow {
  return { id: randomUUID(), at: Date.now(), requestId: 'r', kind: 'request', tenant: 'default', keyId: 'k1', provider: 'openai', model: 'm', status: 200, errorCode: null, cacheHit: false, promptTokens: 1, completionTokens: 1, cachedTokens: 0, costNano, savedNano: 0, latencyMs: 5, ttftMs: null, epoch: null };
}

async function setup(t: Test): Promise<{ parts: BudgetParts; budget: ReturnType<typeof redisBudget>; prefix: string }> {
  const prefix = testPrefix();
  prefixes.push(prefix);
  const redis = new Redis({ host: REDIS_HOST, port: REDIS_PORT, keyPrefix: prefix });
  t.teardown(() => redis.disconnect());
  const parts = await budgetParts(t, 'postgres');
  return { parts, budget: redisBudget(t, redis, parts), prefix };
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
