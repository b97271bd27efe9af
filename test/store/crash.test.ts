// A gateway killed with SIGKILL loses exactly the ledger rows it had queued and not yet written —
// those settled since its last write, which the timer makes every MODELGATE_LEDGER_FLUSH_INTERVAL
// ms — and never writes a row twice. On both engines: with the timer out of the way, writes happen
// only where the test asks for them (GET /v1/usage writes the queue first), so what is lost is known
// to the row; then, with the default interval, how much a kill mid-traffic loses is measured and
// reported (a measurement, not a timing assertion).
import t from 'tap';
import { startFakeOpenAI, openAIResponder, PROVIDER_KEYS } from '../helpers/fakes.js';
import type { FakeProvider } from '../helpers/fake-provider.js';
import { call, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { chatRequest, testCatalog } from '../helpers/money.js';
import { ENGINES, engineEnv, openTestStore } from '../helpers/database.js';
import { openSqlite, type Store } from '../../core/store/database.js';
import { startGatewayProcess } from '../helpers/process.js';
import type { Engine } from '../../core/store/database.js';

let upstream: FakeProvider;
t.before(async () => {
  upstream = await startFakeOpenAI();
  upstream.fallback = openAIResponder();
});
t.teardown(() => upstream.close());

const body = JSON.stringify(chatRequest(16));

function settings(engine: Engine, flushMs: number): Record<string, string> {
  return {
    ...PROTOCOL_ONLY,
    ...engineEnv(engine),
    MODELGATE_RATE_LIMITING_ENABLED: 'false',
    MODELGATE_LEDGER_FLUSH_INTERVAL: String(flushMs),
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_MODEL_CATALOG: testCatalog(),
  };
}

async function ledgerOf(t: Parameters<typeof openTestStore>[0], engine: Engine, env: Record<string, string>) {
  const store: Store = engine === 'postgres' ? await openTestStore(t, engine, { schema: env.MODELGATE_DATABASE_SCHEMA }) : openSqlite(env.MODELGATE_DATA_DIR!);
  if (engine === 'sqlite') t.teardown(() => store.close());
  const rows = await store.db.selectFrom('ledger').select(['id', 'request_id']).execute();
  const daily = await store.db.selectFrom('usage_daily').select((eb) => eb.fn.sum<number>('requests').as('n')).executeTakeFirstOrThrow();
  return { rows, rollupRequests: Number(daily.n ?? 0) };
}

for (const engine of ENGINES) {
  t.test(`${engine}: SIGKILL loses exactly the rows queued since the last write, and nothing is written twice`, async (t) => {
    const env = settings(engine, 60_000);
    const gateway = await startGatewayProcess(env);
    const written: string[] = [];
    for (let i = 0; i < 40; i++) written.push((await call(gateway.url, '/chat/completions', { body })).headers.get('x-request-id')!);
    t.equal((await call(gateway.url, '/usage')).status, 200, 'writes the queue');
    const queued: string[] = [];
    for (let i = 0; i < 25; i++) queued.push((await call(gateway.url, '/chat/completions', { body })).headers.get('x-request-id')!);
    gateway.child.kill('SIGKILL');
    await gateway.exited;

    const { rows, rollupRequests } = await ledgerOf(t, engine, env);
    t.same(rows.map((row) => row.request_id).sort(), [...written].sort(), 'the 40 written before are there; the 25 queued since are what was lost');
    t.equal(new Set(rows.map((row) => row.id)).size, rows.length, 'no row twice');
    t.equal(rollupRequests, rows.length, 'the rollups hold exactly the rows written');
  });

  t.test(`${engine}: measured — what a SIGKILL mid-traffic loses with the default 1 s interval`, async (t) => {
    const env = settings(engine, 1000);
    const gateway = await startGatewayProcess(env);
    let answered = 0;
    const until = Date.now() + 2500;
    while (Date.now() < until) if ((await call(gateway.url, '/chat/completions', { body })).status === 200) answered++;
    gateway.child.kill('SIGKILL');
    await gateway.exited;
    const { rows, rollupRequests } = await ledgerOf(t, engine, env);
    const lost = answered - rows.length;
    t.comment(`${engine}: ${answered} requests answered back to back in 2.5 s; after SIGKILL ${rows.length} ledger rows: ${lost} lost (${((lost / answered) * 100).toFixed(1)}%)`);
    t.ok(rows.length <= answered, 'no row that was not answered, none twice');
    t.equal(rollupRequests, rows.length, 'the rollups hold exactly the rows written');
  });
}
