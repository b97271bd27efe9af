// Per-key budgets in both budget stores: a key's own daily budget holds on top of the gateway's
// (either refuses, and says whose), concurrent reservations never overshoot it, two Redis stores
// (replicas) hold it together, and it is never reset to $0 — read from the ledger after a restart
// (embedded) or after Redis lost its state (a FLUSH of the test's prefix), every cost once,
// including costs settled before the key's counters were seeded and written after.
import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { currentPeriods } from '../../plugins/cost/periods.js';
import type { LedgerRow } from '../../plugins/cost/ledger-row.js';
import type { BudgetStore, KeyBudget } from '../../plugins/cost/budget-store.js';
import { MemoryBudget } from '../../plugins/cost/memory-budget.js';
import { budgetParts, memoryBudget, redisBudget, type BudgetParts } from '../helpers/budget.js';
import { flushPrefix, REDIS_HOST, REDIS_PORT, testPrefix } from '../helpers/redis.js';

const OPEN = { day: 1e12, week: 1e12, month: 1e12 };
const KEY: KeyBudget = { keyId: 'k-budget', limits: { day: 100 } };
const prefixes: string[] = [];
t.teardown(async () => {
  for (const prefix of prefixes) await flushPrefix(prefix);
});

function row(costNano: number, keyId = KEY.keyId): LedgerRow {
  return { id: randomUUID(), at: Date.now(), requestId: 'r', kind: 'request', tenant: 't', keyId, provider: 'openai', model: 'm', status: 200, errorCode: null, cacheHit: false, promptTokens: 1, completionTokens: 1, cachedTokens: 0, costNano, savedNano: 0, latencyMs: 5, ttftMs: null, epoch: null };
}

async function redisStore(t: Test, parts: BudgetParts, prefix = testPrefix()): Promise<{ budget: BudgetStore; prefix: string }> {
  prefixes.push(prefix);
  const redis = new Redis({ host: REDIS_HOST, port: REDIS_PORT, keyPrefix: prefix });
  t.teardown(() => redis.disconnect());
  // Connected first, as the gateway's store is (openBudgetStore): a store that meets Redis only
  // after its first script would take it for a Redis that restarted.
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  return { budget: await redisBudget(t, redis, parts), prefix };
}

/** 20 reservations of 30 at once against the key's 100: exactly 3 pass, every refusal the key's. */
async function concurrent(t: Test, stores: BudgetStore[]): Promise<void> {
  const periods = currentPeriods();
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => stores[i % stores.length]!.reserve(`c${i}`, 30, periods, OPEN, KEY)));
  t.equal(results.filter((result) => result.ok).length, 3, 'three fit in the key budget');
  t.ok(
    results.every((result) => result.ok || (result.reason === 'limit' && result.scope === 'key' && result.period === 'day')),
    "every refusal is the key's daily budget",
  );
  // A key without budgets, and another key, are not held by it.
  t.same(await stores[0]!.reserve('other', 500, periods, OPEN, { keyId: 'k-other', limits: { day: 1000 } }), { ok: true });
  t.same(await stores[0]!.reserve('none', 500, periods, OPEN), { ok: true });
  // Settling one at 30 and releasing the other two leaves room for two more.
  await stores[0]!.settle(`c${results.findIndex((r) => r.ok)}`, 30, periods, [row(30)], KEY.keyId);
  for (const [i, result] of results.entries()) if (result.ok) await stores[0]!.settle(`c${i}`, 0, periods, [], KEY.keyId);
  const after = await Promise.all([0, 1, 2].map((i) => stores[i % stores.length]!.reserve(`d${i}`, 30, periods, OPEN, KEY)));
  t.equal(after.filter((result) => result.ok).length, 2, '30 spent: two more fit, not three');
  t.same(after.find((result) => !result.ok), { ok: false, reason: 'limit', scope: 'key', period: 'day', spent: 30, reserved: 60 });
}

t.test('embedded: concurrent reservations never overshoot a key budget', async (t) => {
  await concurrent(t, [await memoryBudget(t)]);
});

t.test('redis: two stores on one Redis hold a key budget together', async (t) => {
  const parts = await budgetParts(t, 'postgres');
  const { budget: a, prefix } = await redisStore(t, parts);
  const { budget: b } = await redisStore(t, parts, prefix);
  await concurrent(t, [a, b]);
});

async function bothBudgets(t: Test, budget: BudgetStore): Promise<void> {
  const periods = currentPeriods();
  const gateway = { day: 150, week: 1e12, month: 1e12 };
  const key: KeyBudget = { keyId: 'k-both', limits: { day: 120 } };
  t.same(await budget.reserve('b1', 100, periods, gateway, key), { ok: true });
  t.match(await budget.reserve('b2', 30, periods, gateway, key), { ok: false, scope: 'key', spent: 0, reserved: 100 }, 'the key budget refuses first');
  t.match(await budget.reserve('b3', 60, periods, gateway), { ok: false, scope: 'gateway', reserved: 100 }, "another key meets the gateway's");
  t.match(await budget.reserve('b4', 10, periods, { ...gateway, day: 105 }, key), { ok: false, scope: 'gateway' }, 'the gateway budget refuses a key with room');
  await budget.settle('b1', 0, periods, [], key.keyId);
  t.same(await budget.reserve('b5', 120, periods, gateway, key), { ok: true }, 'the release freed both budgets, and no refused request held anything');
}

t.test('embedded: a request must fit both the key budget and the gateway budget', async (t) => {
  await bothBudgets(t, await memoryBudget(t));
});

t.test('redis: a request must fit both the key budget and the gateway budget', async (t) => {
  await bothBudgets(t, (await redisStore(t, await budgetParts(t, 'postgres'))).budget);
});

t.test('embedded: a key budget is read from the ledger after a restart, never reset', async (t) => {
  const parts = await budgetParts(t);
  const before = await MemoryBudget.open(parts.ledger, parts.history, parts.records);
  const periods = currentPeriods();
  t.same(await before.reserve('m1', 90, periods, OPEN, KEY), { ok: true });
  await before.settle('m1', 90, periods, [row(90)], KEY.keyId);
  // Spend of the key settled before it had a budget is in the ledger only.
  await before.settle('m0', 5, periods, [row(5)], KEY.keyId);
  const restarted = await MemoryBudget.open(parts.ledger, parts.history, parts.records);
  t.match(await restarted.reserve('m2', 10, periods, OPEN, KEY), { ok: false, scope: 'key', spent: 95 }, "the ledger's 95 (queued rows written first)");
  t.same(await restarted.reserve('m3', 5, periods, OPEN, KEY), { ok: true });
});

t.test('redis: a key budget is rebuilt from the ledger after Redis lost its state, every cost once', async (t) => {
  const parts = await budgetParts(t, 'postgres');
  const { budget, prefix } = await redisStore(t, parts);
  const periods = currentPeriods();
  // Costs of the key before it has a budget: counted in the ledger, not by its counters.
  await budget.settle('p0', 7, periods, [row(7)], KEY.keyId);
  t.same(await budget.reserve('p1', 50, periods, OPEN, KEY), { ok: true }, 'the first budgeted request seeds the key from the ledger');
  await budget.settle('p1', 50, periods, [row(50)], KEY.keyId);
  t.match(await budget.reserve('p2', 50, periods, OPEN, KEY), { ok: false, scope: 'key', spent: 57 }, '7 before the seed, 50 after it');
  await parts.ledger.flush();
  // Counted, still queued here when Redis is lost: written by the timer before the rebuild reads.
  await budget.settle('p3', 3, periods, [row(3)], KEY.keyId);

  await flushPrefix(prefix);
  // Settled after the loss, before anyone seeded the key again: the ledger carries it.
  await budget.settle('p4', 10, periods, [row(10)], KEY.keyId);
  t.match(await budget.reserve('p5', 40, periods, OPEN, KEY), { ok: false, scope: 'key', spent: 70 }, 'rebuilt: 57 + 3 + 10, not $0');
  t.same(await budget.reserve('p6', 30, periods, OPEN, KEY), { ok: true });
  t.equal((await budget.snapshot(periods)).spent.day, 70, "the gateway's budget was rebuilt with it");
});

t.test('redis: a cost settled before the key was seeded and written after the seed is added once', async (t) => {
  const parts = await budgetParts(t, 'postgres');
  const { budget } = await redisStore(t, parts);
  const periods = currentPeriods();
  t.same(await budget.reserve('s0', 1, periods, OPEN), { ok: true }, 'the epoch is seeded');
  // Settled while the key is not seeded: queued, not yet in the database.
  parts.ledger.add([]);
  await budget.settle('s1', 40, periods, [row(40)], KEY.keyId);
  // The key is seeded now: the ledger writer's flush waits until after it, so the seed misses the row…
  t.same(await budget.reserve('s2', 50, periods, OPEN, KEY), { ok: true });
  await budget.settle('s2', 0, periods, [], KEY.keyId);
  await parts.ledger.flush();
  // …and either the seed read it (it was written first) or the late check added it: counted once.
  t.match(await budget.reserve('s3', 61, periods, OPEN, KEY), { ok: false, scope: 'key', spent: 40 });
  t.same(await budget.reserve('s4', 60, periods, OPEN, KEY), { ok: true });
});

t.test("redis: a request in flight when Redis lost its state is held again on its key's budget, and released by its settlement", async (t) => {
  const parts = await budgetParts(t, 'postgres');
  const { budget, prefix } = await redisStore(t, parts);
  const periods = currentPeriods();
  t.same(await budget.reserve('f1', 80, periods, OPEN, KEY), { ok: true });
  await flushPrefix(prefix);
  // The next script meets the new epoch: the replica puts its reservation in flight back.
  for (let i = 0; i < 50 && (await budget.snapshot(periods)).reserved === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  t.equal((await budget.snapshot(periods)).reserved, 80, "the gateway's share is held again");
  t.match(await budget.reserve('f2', 30, periods, OPEN, KEY), { ok: false, scope: 'key', reserved: 80 }, "and so is the key's");
  await budget.settle('f1', 10, periods, [row(10)], KEY.keyId);
  t.same(await budget.reserve('f3', 90, periods, OPEN, KEY), { ok: true }, 'the settlement released both: 10 spent, 90 fit');
});
