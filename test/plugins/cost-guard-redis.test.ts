// The cost guard with MODELGATE_STORE=redis: two gateway instances share one budget, so concurrent
// requests through both cannot overshoot it; alert rules fire once across both; a pause set through
// one refuses on the other; a settlement that meets a frozen Redis is kept and lands later, counted
// once however many copies reach Redis, and a reservation that timed out is released; a Redis that is
// gone refuses paid requests (503) rather than spend without a budget.
import t, { type Test } from 'tap';
import { startGateway, startPair, call, type TestGateway, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { startFakeOpenAI, openAIResponder, PROVIDER_KEYS } from '../helpers/fakes.js';
import { json, fixtureJson, sleep, type FakeProvider } from '../helpers/fake-provider.js';
import { testPrefix, redisEnv, flushPrefix, REDIS_HOST, REDIS_PORT } from '../helpers/redis.js';
import { startPrivateRedis } from '../helpers/private-redis.js';
import { chatRequest, estimateOf, FIXTURE_COST, near, PRICE, testCatalog } from '../helpers/money.js';
import type { AlertEvent } from '../../core/events.js';
import { Redis } from 'ioredis';
import { RedisBudget } from '../../plugins/cost/redis-budget.js';
import { currentPeriods } from '../../plugins/cost/periods.js';
import { postgresEnv } from '../helpers/database.js';
import { budgetParts, redisBudget } from '../helpers/budget.js';

let upstream: FakeProvider;
const catalog = testCatalog();
const prefixes: string[] = [];
t.before(async () => {
  upstream = await startFakeOpenAI();
});
t.after(async () => {
  await upstream.close();
  for (const prefix of prefixes) await flushPrefix(prefix);
});
t.beforeEach(() => {
  upstream.reset();
  upstream.fallback = openAIResponder();
});

/** Two instances on one Redis prefix and one PostgreSQL schema of their own. */
async function pair(t: Test, env: Record<string, string> = {}): Promise<[TestGateway, TestGateway]> {
  const prefix = testPrefix();
  prefixes.push(prefix);
  // A patient command timeout: the shared Redis may be slow on a busy machine.
  const shared = {
    ...PROTOCOL_ONLY,
    ...redisEnv(prefix),
    ...postgresEnv(),
    REDIS_COMMAND_TIMEOUT: '5000',
    MODELGATE_STORE: 'redis',
    MODELGATE_LEDGER_FLUSH_INTERVAL: '100',
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_MODEL_CATALOG: catalog,
    ...env,
  };
  return startPair(t, shared);
}

/** The Redis budget store on its own, under a prefix of its own, over an SQLite ledger. */
async function budgetStore(t: Test): Promise<RedisBudget> {
  const prefix = testPrefix();
  prefixes.push(prefix);
  const redis = new Redis({ host: REDIS_HOST, port: REDIS_PORT, keyPrefix: prefix });
  t.teardown(() => redis.disconnect());
  return redisBudget(t, redis, await budgetParts(t));
}

const send = (gateway: TestGateway, body: object) => call(gateway.url, '/chat/completions', { body: JSON.stringify(body) });
const usage = async (gateway: TestGateway) => (await call(gateway.url, '/usage')).json;

t.test('20 concurrent requests through two instances against a budget that admits 3: three go through, spend stays within limit + one estimate', async (t) => {
  const request = chatRequest(64);
  const estimate = estimateOf(request);
  const limit = 3.5 * estimate;
  const [a, b] = await pair(t, { MODELGATE_DAILY_COST_LIMIT: String(limit) });
  let releaseAll!: () => void;
  const released = new Promise<void>((resolve) => (releaseAll = resolve));
  upstream.fallback = async (recorded, res) => {
    await released;
    return json(200, { ...fixtureJson('openai/chat.json'), usage: { prompt_tokens: 24, completion_tokens: 64, total_tokens: 88 } })(recorded, res);
  };
  const responses = Promise.all(Array.from({ length: 20 }, (_, i) => send(i % 2 === 0 ? a : b, request)));
  for (let i = 0; i < 200 && upstream.requests.length < 3; i++) await sleep(20);
  releaseAll();
  const statuses = (await responses).map((r) => r.status);
  t.equal(statuses.filter((s) => s === 200).length, 3, 'three admitted across both instances');
  t.equal(statuses.filter((s) => s === 429).length, 17);
  t.equal(upstream.requests.length, 3);
  const fromA = (await usage(a)).budgets.day;
  const fromB = (await usage(b)).budgets.day;
  t.ok(near(fromA.spent_usd, 3 * 88 * PRICE), `settled $${fromA.spent_usd}`);
  t.ok(fromA.spent_usd <= limit + estimate, `settled $${fromA.spent_usd} ≤ limit $${limit} + one estimate $${estimate} (overshoot ${(fromA.spent_usd / limit - 1) * 100}%)`);
  t.equal(fromB.spent_usd, fromA.spent_usd, 'both instances read the same budget');
  t.equal(fromA.reserved_usd, 0, 'every reservation was released');
  t.equal(fromB.requests, 3, 'usage rollups are shared');
});

t.test('the weekly and monthly limits refuse in their own name through the Redis script', async (t) => {
  const request = chatRequest(64);
  const tight = String(FIXTURE_COST + estimateOf(request) - 1e-6);
  for (const [setting, param] of [
    ['MODELGATE_WEEKLY_COST_LIMIT', 'weekly_cost_limit'],
    ['MODELGATE_MONTHLY_COST_LIMIT', 'monthly_cost_limit'],
  ] as const) {
    const [a, b] = await pair(t, { MODELGATE_DAILY_COST_LIMIT: '1000', MODELGATE_WEEKLY_COST_LIMIT: '1000', MODELGATE_MONTHLY_COST_LIMIT: '1000', [setting]: tight });
    t.equal((await send(a, request)).status, 200);
    const refused = await send(b, request);
    t.equal(refused.status, 429, setting);
    t.equal(refused.json.error.param, param, 'the period the script named');
  }
});

t.test('a threshold fires once across instances, and a pause set through one refuses on the other until resumed', async (t) => {
  const request = chatRequest(64);
  const [a, b] = await pair(t, { MODELGATE_DAILY_COST_LIMIT: String(10 * FIXTURE_COST), MODELGATE_ALERT_RULES: '0.25:email,0.4:pause' });
  const alerts: Array<[string, AlertEvent]> = [];
  a.app.deps.events.on('alert', (event) => alerts.push(['a', event]));
  b.app.deps.events.on('alert', (event) => alerts.push(['b', event]));
  for (let i = 0; i < 4; i++) t.equal((await send(i % 2 === 0 ? a : b, request)).status, 200, `request ${i + 1}`);
  // Settlement follows the response: wait for the fourth to be settled.
  for (let i = 0; i < 200 && alerts.length < 2; i++) await sleep(20);
  t.same(
    alerts.map(([, event]) => event.action),
    ['email', 'pause'],
    'each rule fired once in all',
  );
  const pausedOnA = await send(a, request);
  const pausedOnB = await send(b, request);
  t.equal(pausedOnA.json.error?.code, 'budget_paused');
  t.equal(pausedOnB.json.error?.code, 'budget_paused', 'the pause is shared');

  const resumed = await call(b.url, '/budget/resume', { method: 'POST' });
  t.equal(resumed.json.resumed, true);
  t.equal((await send(a, request)).status, 200, 'resumed through b, admitted on a');
  t.equal(alerts.length, 2);
});

t.test('a settlement that meets a frozen Redis is kept and lands once Redis answers; a stopped Redis refuses paid requests with 503', async (t) => {
  const redis = await startPrivateRedis();
  t.teardown(() => redis.stop());
  const prefix = testPrefix();
  const gateway = await startGateway({
    ...PROTOCOL_ONLY,
    REDIS_HOST: '127.0.0.1',
    REDIS_PORT: String(redis.port),
    REDIS_KEY_PREFIX: prefix,
    REDIS_COMMAND_TIMEOUT: '1000',
    MODELGATE_STORE: 'redis',
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_MODEL_CATALOG: catalog,
  });
  t.teardown(() => gateway.close());
  t.equal((await answeredWhileFrozen(gateway, redis)).status, 200, 'the answer reaches the client even though Redis is frozen');
  redis.resume();
  let spent = 0;
  for (let i = 0; i < 100 && spent === 0; i++) {
    const report = await call(gateway.url, '/usage');
    if (report.status === 200) spent = report.json.budgets.day.spent_usd;
    if (spent === 0) await sleep(100);
  }
  t.ok(near(spent, FIXTURE_COST), `the kept settlement landed: $${spent}`);

  await redis.stop();
  for (let i = 0; i < 100 && !gateway.logs.some((line) => line.msg === 'redis unavailable'); i++) await sleep(20);
  const before = upstream.requests.length;
  for (let i = 0; i < 3; i++) {
    const refused = await send(gateway, chatRequest(64));
    t.equal(refused.status, 503);
    t.equal(refused.json.error.message, 'Budget store unavailable');
  }
  t.equal(upstream.requests.length, before, 'nothing was spent without a budget');
  const report = await call(gateway.url, '/usage');
  t.equal(report.status, 503, 'usage cannot show the budgets without Redis: 503, not 500');
  t.equal(report.json.error.message, 'Budget store unavailable');
  const kept = gateway.logs.filter((line) => String(line.msg).startsWith('budget: reservation failed'));
  t.equal(kept.length, 0, 'a reservation never sent (no connection) leaves nothing to release');
});

/** A gateway on a private Redis (so the test may freeze it) that gives up on a command after 200 ms. */
async function onPrivateRedis(t: Test, port: number): Promise<TestGateway> {
  const gateway = await startGateway({
    ...PROTOCOL_ONLY,
    REDIS_HOST: '127.0.0.1',
    REDIS_PORT: String(port),
    REDIS_KEY_PREFIX: testPrefix(),
    REDIS_COMMAND_TIMEOUT: '200',
    MODELGATE_STORE: 'redis',
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_MODEL_CATALOG: catalog,
  });
  t.teardown(() => gateway.close());
  return gateway;
}

/** A request whose answer arrives while Redis is frozen (SIGSTOP): it reserved, then must settle. */
async function answeredWhileFrozen(gateway: TestGateway, redis: { pause(): void }) {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  upstream.next(async (recorded, res) => {
    await held;
    return openAIResponder()(recorded, res);
  });
  const inFlight = send(gateway, chatRequest(64));
  for (let i = 0; i < 200 && upstream.requests.length === 0; i++) await sleep(20);
  redis.pause();
  release();
  return inFlight;
}

/** Waits (boundedly) until the budget store says every kept settlement reached Redis. */
async function keptSettlementsLanded(gateway: TestGateway): Promise<boolean> {
  for (let i = 0; i < 300; i++) {
    if (gateway.logs.some((line) => line.msg === 'budget: every kept settlement reached Redis')) return true;
    await sleep(50);
  }
  return false;
}

t.test('a settlement whose command times out behind a Redis frozen for seconds is counted once, however often it was re-sent', async (t) => {
  const redis = await startPrivateRedis();
  t.teardown(() => redis.stop());
  const gateway = await onPrivateRedis(t, redis.port);
  t.equal((await answeredWhileFrozen(gateway, redis)).status, 200);
  // Frozen for many command timeouts and several retry rounds: every copy sent stays queued.
  await sleep(3500);
  redis.resume();
  t.ok(await keptSettlementsLanded(gateway), 'the kept settlement landed');
  const day = (await usage(gateway)).budgets.day;
  t.ok(near(day.spent_usd, FIXTURE_COST), `one request costing $${FIXTURE_COST} is counted once: $${day.spent_usd}`);
  t.equal(day.reserved_usd, 0, 'its reservation was released');
});

t.test('a reservation whose command timed out (the client got 503) is released once Redis answers, not held for 15 minutes', async (t) => {
  const redis = await startPrivateRedis();
  t.teardown(() => redis.stop());
  const gateway = await onPrivateRedis(t, redis.port);
  redis.pause();
  const statuses = (await Promise.all([1, 2, 3].map(() => send(gateway, chatRequest(64))))).map((r) => r.status);
  t.same(statuses, [503, 503, 503], 'refused: the budget could not be checked');
  await sleep(1500);
  redis.resume();
  t.ok(await keptSettlementsLanded(gateway), 'the releases landed');
  const day = (await usage(gateway)).budgets.day;
  t.equal(day.reserved_usd, 0, 'nothing stays reserved');
  t.equal(day.spent_usd, 0, 'nothing was spent');
  t.equal(upstream.requests.length, 0);
});

t.test('the store: a settlement sent twice counts once, and a reservation that arrives after its release is refused', async (t) => {
  const budget = await budgetStore(t);
  const periods = currentPeriods();
  const limits = { day: 1e9, week: 1e9, month: 1e9 };
  t.same(await budget.reserve('r1', 500, periods, limits), { ok: true });
  t.same(await budget.settle('r1', 300, periods), { day: 300, week: 300, month: 300 });
  t.same(await budget.settle('r1', 300, periods), { day: 300, week: 300, month: 300 }, 'the second copy counted nothing');
  // A reservation whose script timed out is released by a settlement of $0; should the
  // reservation itself arrive later, it must not hold anything.
  await budget.settle('r2', 0, periods);
  await t.rejects(budget.reserve('r2', 500, periods, limits), /already settled/);
  const snapshot = await budget.snapshot(periods);
  t.equal(snapshot.reserved, 0);
  t.equal(snapshot.spent.day, 300);
});

t.test('the store: a pause rule is marked fired and pauses in one script, the first time only', async (t) => {
  const budget = await budgetStore(t);
  const day = currentPeriods().day;
  const pause = { period: 'day', periodKey: day.key, threshold: 0.9, until: day.resetsAt } as const;
  t.equal(await budget.fireOnce(day, '0.5:email'), true);
  t.equal((await budget.snapshot(currentPeriods())).pause, undefined, 'an e-mail rule does not pause');
  t.equal(await budget.fireOnce(day, '0.9:pause', pause), true);
  t.same((await budget.snapshot(currentPeriods())).pause, pause);
  t.equal(await budget.resume(), true);
  t.equal(await budget.fireOnce(day, '0.9:pause', pause), false, 'fired already');
  t.equal((await budget.snapshot(currentPeriods())).pause, undefined, 'so the resume stands');
});

t.test('the store: a pause firing while a longer one holds does not shorten it', async (t) => {
  const budget = await budgetStore(t);
  const { day, week } = currentPeriods();
  const weekPause = { period: 'week', periodKey: week.key, threshold: 0.9, until: week.resetsAt + 1 } as const;
  const dayPause = { period: 'day', periodKey: day.key, threshold: 0.9, until: day.resetsAt } as const;
  t.equal(await budget.fireOnce(week, '0.9:pause', weekPause), true);
  t.equal(await budget.fireOnce(day, '0.9:pause', dayPause), true, 'the day rule fires (once)');
  t.same((await budget.snapshot(currentPeriods())).pause, weekPause, 'the week pause stands');
});

t.end();
