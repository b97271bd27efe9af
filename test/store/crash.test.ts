// A gateway killed with SIGKILL loses the ledger rows it had queued and not yet written: at most
// one flush interval (MODELGATE_LEDGER_FLUSH_INTERVAL, 1 s by default) of them while the database
// takes writes. Measured on both engines: requests answered one after another for ~2.5 s, then
// SIGKILL; every row older than one interval (and a margin for a batch being written) is in the
// database, and nothing was written twice.
import t from 'tap';
import { startFakeOpenAI, openAIResponder, PROVIDER_KEYS } from '../helpers/fakes.js';
import type { FakeProvider } from '../helpers/fake-provider.js';
import { call, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { chatRequest, testCatalog } from '../helpers/money.js';
import { ENGINES, engineEnv, openTestStore } from '../helpers/database.js';
import { openSqlite } from '../../core/store/database.js';
import { startGatewayProcess } from '../helpers/process.js';

const FLUSH_MS = 1000;
/** A batch that started just before the kill may have been about to commit. */
const MARGIN_MS = 300;

let upstream: FakeProvider;
t.before(async () => {
  upstream = await startFakeOpenAI();
  upstream.fallback = openAIResponder();
});
t.teardown(() => upstream.close());

for (const engine of ENGINES) {
  t.test(`${engine}: SIGKILL loses at most one flush interval of ledger rows`, async (t) => {
    const env: Record<string, string> = { ...PROTOCOL_ONLY, ...engineEnv(engine), MODELGATE_RATE_LIMITING_ENABLED: 'false', MODELGATE_LEDGER_FLUSH_INTERVAL: String(FLUSH_MS), OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_MODEL_CATALOG: testCatalog() };
    const gateway = await startGatewayProcess(env);
    const answeredAt: number[] = [];
    const body = JSON.stringify(chatRequest(16));
    const until = Date.now() + 2500;
    while (Date.now() < until) {
      const answer = await call(gateway.url, '/chat/completions', { body });
      if (answer.status === 200) answeredAt.push(Date.now());
    }
    gateway.child.kill('SIGKILL');
    const killedAt = Date.now();
    await gateway.exited;

    const store = engine === 'postgres' ? await openTestStore(t, engine, { schema: env.MODELGATE_DATABASE_SCHEMA }) : openSqlite(env.MODELGATE_DATA_DIR!);
    if (engine === 'sqlite') t.teardown(() => store.close());
    const rows = Number((await store.db.selectFrom('ledger').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    const daily = Number((await store.db.selectFrom('usage_daily').select((eb) => eb.fn.sum<number>('requests').as('n')).executeTakeFirstOrThrow()).n ?? 0);
    const lost = answeredAt.length - rows;
    const surelyWritten = answeredAt.filter((at) => at < killedAt - FLUSH_MS - MARGIN_MS).length;
    const inLastInterval = answeredAt.length - surelyWritten;
    t.comment(`${engine}: ${answeredAt.length} requests answered in 2.5 s, ${rows} ledger rows after SIGKILL: ${lost} lost (${((lost / answeredAt.length) * 100).toFixed(1)}%); ${inLastInterval} were answered in the last ${FLUSH_MS + MARGIN_MS} ms`);
    t.ok(rows >= surelyWritten, `every row older than one flush interval was written (${rows} ≥ ${surelyWritten})`);
    t.ok(lost >= 0 && lost <= inLastInterval, `what was lost (${lost}) is within the last interval's ${inLastInterval}`);
    t.equal(daily, rows, 'the rollups hold exactly the rows written');
  });
}
