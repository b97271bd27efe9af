// Three gateway processes, started at the same moment, on one PostgreSQL schema and one Redis
// prefix keep one ledger: every request is one row, the rollups and the shared budget agree with
// the rows; after Redis is flushed the budgets are rebuilt from the ledger (nobody's spend goes back
// to $0, and the limit still refuses); a restarted replica reads the same history.
import t from 'tap';
import { startFakeOpenAI, openAIResponder, PROVIDER_KEYS } from '../helpers/fakes.js';
import type { FakeProvider } from '../helpers/fake-provider.js';
import { call, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { chatRequest, estimateOf, FIXTURE_COST, near, testCatalog } from '../helpers/money.js';
import { flushPrefix, redisEnv, testPrefix } from '../helpers/redis.js';
import { openTestStore, postgresEnv, testSchema } from '../helpers/database.js';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.js';

let upstream: FakeProvider;
const prefix = testPrefix();
t.before(async () => {
  upstream = await startFakeOpenAI();
  upstream.fallback = openAIResponder();
});
t.teardown(async () => {
  await upstream.close();
  await flushPrefix(prefix);
});

const request = chatRequest(64);
const send = (gateway: GatewayProcess) => call(gateway.url, '/chat/completions', { body: JSON.stringify(request) });
const spentToday = async (gateway: GatewayProcess) => (await call(gateway.url, '/usage')).json.budgets.day;

t.test('three replicas keep one ledger through a Redis flush and a restart', async (t) => {
  const schema = testSchema();
  const env = {
    ...PROTOCOL_ONLY,
    ...redisEnv(prefix),
    ...postgresEnv(schema),
    MODELGATE_STORE: 'redis',
    MODELGATE_LEDGER_FLUSH_INTERVAL: '200',
    REDIS_COMMAND_TIMEOUT: '5000',
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_MODEL_CATALOG: testCatalog(),
    // Room for 33 answers and one more estimate, not for a 34th request.
    MODELGATE_DAILY_COST_LIMIT: String(33 * FIXTURE_COST + estimateOf(request) - 1e-7),
  };
  const replicas = await Promise.all([1, 2, 3].map(() => startGatewayProcess(env)));
  t.teardown(() => Promise.all(replicas.map((replica) => replica.stop())).then(() => undefined));

  // One at a time: each reserves an estimate larger than what it costs, and the limit is tight.
  const statuses: number[] = [];
  for (let i = 0; i < 30; i++) statuses.push((await send(replicas[i % 3]!)).status);
  t.same(statuses, Array(30).fill(200));
  for (const replica of replicas) t.ok(near((await spentToday(replica)).spent_usd, 30 * FIXTURE_COST), 'every replica reads the one budget');

  const store = await openTestStore(t, 'postgres', { schema });
  const ledger = async () => {
    const rows = await store.db.selectFrom('ledger').select((eb) => [eb.fn.countAll<number>().as('rows'), eb.fn.sum<number>('cost_nano').as('nano')]).executeTakeFirstOrThrow();
    const daily = await store.db.selectFrom('usage_daily').select((eb) => [eb.fn.sum<number>('requests').as('requests'), eb.fn.sum<number>('cost_nano').as('nano')]).executeTakeFirstOrThrow();
    return { rows: Number(rows.rows), nano: Number(rows.nano), rollupRequests: Number(daily.requests), rollupNano: Number(daily.nano) };
  };
  // Each /v1/usage above wrote its replica's queue first.
  const written = await ledger();
  t.equal(written.rows, 30, 'one row per request, whichever replica answered');
  t.equal(written.rollupRequests, 30);
  t.equal(written.nano, written.rollupNano, 'the rollups sum the rows');
  t.ok(near(written.nano / 1e9, 30 * FIXTURE_COST), 'and the rows are what the budget counted');

  await flushPrefix(prefix);
  for (const replica of replicas) t.equal((await send(replica)).status, 200, 'served after the flush');
  for (const replica of replicas) t.ok(near((await spentToday(replica)).spent_usd, 33 * FIXTURE_COST), 'rebuilt from the ledger, not reset to $0');
  const refused = await send(replicas[0]!);
  t.equal(refused.status, 429, 'the limit holds as before the flush');
  t.equal(refused.json.error.param, 'daily_cost_limit');
  t.ok(replicas.some((replica) => replica.logs.some((line) => line.msg === 'budget: rebuilt from the ledger')), 'one replica rebuilt it');

  await replicas[2]!.stop();
  replicas[2] = await startGatewayProcess(env);
  t.ok(near((await spentToday(replicas[2])).spent_usd, 33 * FIXTURE_COST), 'a restarted replica reads the same spend');
  const after = await ledger();
  t.equal(after.rows, 33);
  t.equal(after.rollupRequests, 33);
  t.ok(near(after.rollupNano / 1e9, 33 * FIXTURE_COST));
});

t.test('two replicas under concurrent load keep one ledger that matches the shared budget', async (t) => {
  const schema = testSchema();
  const pairPrefix = testPrefix();
  t.teardown(() => flushPrefix(pairPrefix));
  const env = {
    ...PROTOCOL_ONLY,
    ...redisEnv(pairPrefix),
    ...postgresEnv(schema),
    MODELGATE_STORE: 'redis',
    MODELGATE_RATE_LIMITING_ENABLED: 'false',
    REDIS_COMMAND_TIMEOUT: '5000',
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_MODEL_CATALOG: testCatalog(),
  };
  const replicas = await Promise.all([1, 2].map(() => startGatewayProcess(env)));
  // 8 clients per replica, 10 requests each, all at once.
  const statuses = (await Promise.all(Array.from({ length: 16 }, async (_, client) => {
    const mine: number[] = [];
    for (let i = 0; i < 10; i++) mine.push((await send(replicas[client % 2]!)).status);
    return mine;
  }))).flat();
  t.equal(statuses.filter((status) => status === 200).length, 160);
  const budgets = await Promise.all(replicas.map((replica) => spentToday(replica)));
  t.ok(near(budgets[0].spent_usd, 160 * FIXTURE_COST) && near(budgets[1].spent_usd, 160 * FIXTURE_COST), 'one budget, every request counted once');
  const store = await openTestStore(t, 'postgres', { schema });
  // Rows are written in batches after the answers (MODELGATE_LEDGER_FLUSH_INTERVAL): the last
  // request's row may still be queued when its answer has arrived. Wait for it, at most 5 s.
  const count = () => store.db.selectFrom('ledger').select((eb) => [eb.fn.countAll<number>().as('rows'), eb.fn.sum<number>('cost_nano').as('nano')]).executeTakeFirstOrThrow();
  let rows = await count();
  for (let waited = 0; Number(rows.rows) < 160 && waited < 5000; waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    rows = await count();
  }
  t.equal(Number(rows.rows), 160, 'one row per request');
  t.ok(near(Number(rows.nano) / 1e9, budgets[0].spent_usd), 'the ledger holds what the budget counted');
});
