// An upgrade from 0.1, whose embedded store kept money in MODELGATE_DATA_DIR/ledger.db, does not
// reset anyone's spend: the first start imports its usage into the daily rollups (budgets read
// them), and its fired alert rules and pause, once.
import t from 'tap';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startGateway, call, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { chatRequest, testCatalog, near } from '../helpers/money.js';
import { testDataDir } from '../helpers/database.js';
import { currentPeriods } from '../../plugins/cost/periods.js';

/** The 0.1 ledger's schema, as plugins/cost/sqlite-ledger.ts created it. */
const V0_SCHEMA = `
CREATE TABLE spend (period TEXT PRIMARY KEY, nano INTEGER NOT NULL);
CREATE TABLE usage (
  day TEXT NOT NULL, tenant TEXT NOT NULL, key_id TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL,
  requests INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
  cost_nano INTEGER NOT NULL, cache_hits INTEGER NOT NULL, saved_nano INTEGER NOT NULL,
  PRIMARY KEY (day, tenant, key_id, provider, model)
);
CREATE TABLE alerts (period TEXT NOT NULL, rule TEXT NOT NULL, fired_at INTEGER NOT NULL, PRIMARY KEY (period, rule));
CREATE TABLE state (name TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

function v0Ledger(dir: string, pause?: object): void {
  const periods = currentPeriods();
  const db = new Database(join(dir, 'ledger.db'));
  db.exec(V0_SCHEMA);
  db.prepare('insert into usage values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').run(periods.day.key, 'default', 'bootstrap', 'openai', 'gpt-4o-mini', 7, 7000, 3000, 1_500_000_000, 1, 20_000_000);
  db.prepare('insert into spend values (?, ?)').run(`day:${periods.day.key}`, 1_500_000_000);
  db.prepare('insert into alerts values (?, ?, ?)').run(`day:${periods.day.key}`, '0.5:email', Date.now());
  if (pause) db.prepare('insert into state values (?, ?)').run('pause', JSON.stringify(pause));
  db.close();
}

let upstream: Awaited<ReturnType<typeof startFakeOpenAI>>;
t.before(async () => {
  upstream = await startFakeOpenAI();
});
t.teardown(() => upstream.close());

const env = (dir: string) => ({ ...PROTOCOL_ONLY, MODELGATE_DATA_DIR: dir, MODELGATE_DAILY_COST_LIMIT: '2', OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_MODEL_CATALOG: testCatalog() });

t.test("the first start after an upgrade carries 0.1's spend, usage and fired rules over, once", async (t) => {
  const dir = testDataDir();
  v0Ledger(dir);
  const first = await startGateway(env(dir));
  const day = (await call(first.url, '/usage')).json.budgets.day;
  t.ok(near(day.spent_usd, 1.5), `today's spend carried over: $${day.spent_usd}`);
  t.match(day, { requests: 7, prompt_tokens: 7000, completion_tokens: 3000, cache_hits: 1, saved_usd: 0.02 });
  const alerts: unknown[] = [];
  first.app.deps.events.on('alert', (event) => alerts.push(event));
  t.equal((await call(first.url, '/chat/completions', { body: JSON.stringify(chatRequest(16)) })).status, 200);
  await first.close();
  t.equal(alerts.length, 0, 'the 50% rule had fired under 0.1: it does not fire again');

  const second = await startGateway(env(dir));
  t.teardown(() => second.close());
  const again = (await call(second.url, '/usage')).json.budgets.day;
  t.equal(again.requests, 8, 'imported once, not at every start');
});

t.test("0.1's pause still holds after the upgrade", async (t) => {
  const dir = testDataDir();
  const day = currentPeriods().day;
  v0Ledger(dir, { period: 'day', periodKey: day.key, threshold: 0.75, until: day.resetsAt });
  const gateway = await startGateway(env(dir));
  t.teardown(() => gateway.close());
  const refused = await call(gateway.url, '/chat/completions', { body: JSON.stringify(chatRequest(16)) });
  t.equal(refused.status, 429);
  t.equal(refused.json.error.code, 'budget_paused');
});
