// The ledger writer on both engines: rows are written in batches with the hourly and daily rollups
// summed from exactly the rows written; a batch retried after it committed counts nothing twice; a
// database that refuses writes keeps the rows queued (backlog, `accepting` off past the bound) and
// gets all of them, once, when it takes writes again; replicas upserting the same rollups at once
// do not deadlock; a row whose month has no PostgreSQL partition gets one; through the gateway, a
// full backlog refuses paid requests rather than spend what the ledger cannot record.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { pino } from 'pino';
import { LedgerWriter } from '../../plugins/cost/ledger.js';
import { DAY_MS, HOUR_MS } from '../../plugins/cost/rollups.js';
import type { LedgerRow } from '../../plugins/cost/ledger-row.js';
import type { Store } from '../../core/store/database.js';
import { listPartitions, monthStart, partitionName } from '../../core/store/partitions.js';
import Database from 'better-sqlite3';
import { ENGINES, openTestStore, testDataDir, testSchema } from '../helpers/database.js';
import { startGateway, call, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { testCatalog, chatRequest } from '../helpers/money.js';

const silent = pino({ level: 'silent' });
const NOW = Date.now();

function ledgerRow(fields: Partial<LedgerRow> = {}): LedgerRow {
  return {
    id: randomUUID(),
    at: NOW,
    requestId: 'req-1',
    kind: 'request',
    tenant: 'default',
    keyId: 'k1',
    provider: 'openai',
    model: 'gpt-4o-mini',
    status: 200,
    errorCode: null,
    cacheHit: false,
    promptTokens: 10,
    completionTokens: 5,
    cachedTokens: 2,
    costNano: 1000,
    savedNano: 0,
    latencyMs: 120,
    ttftMs: null,
    epoch: null,
    ...fields,
  };
}

function writer(t: { teardown(fn: () => Promise<void>): void }, store: Store, maxBacklog = 10_000): LedgerWriter {
  const ledger = new LedgerWriter(store, silent, { flushMs: 60_000, maxBacklog });
  t.teardown(() => ledger.close());
  return ledger;
}

async function totals(store: Store, table: 'usage_hourly' | 'usage_daily') {
  return store.db
    .selectFrom(table)
    .select((eb) => [
      eb.fn.count<number>('bucket').as('rows'),
      eb.fn.sum<number>('requests').as('requests'),
      eb.fn.sum<number>('errors').as('errors'),
      eb.fn.sum<number>('cost_nano').as('cost_nano'),
      eb.fn.sum<number>('cached_tokens').as('cached_tokens'),
    ])
    .executeTakeFirstOrThrow();
}

const ledgerCount = async (store: Store) => Number((await store.db.selectFrom('ledger').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

for (const engine of ENGINES) {
  t.test(`${engine}: rows are written with their rollups, per hour and per day, by key, provider, model and status`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const ledger = writer(t, store);
    const hour = NOW - (NOW % HOUR_MS);
    ledger.add([
      ledgerRow({ at: hour + 1, latencyMs: 50, ttftMs: 20 }),
      ledgerRow({ at: hour + 2, latencyMs: 700 }),
      ledgerRow({ at: hour + 3, status: 503, errorCode: 'provider_unavailable', costNano: 0, latencyMs: 90_000 }),
      ledgerRow({ at: hour + 4, kind: 'failed_call', status: 0, errorCode: 'timeout', costNano: 500, promptTokens: 0, completionTokens: 0, cachedTokens: 0 }),
      ledgerRow({ at: hour + 5, keyId: 'k2', cacheHit: true, costNano: 0, savedNano: 800 }),
    ]);
    await ledger.flush();
    t.equal(ledger.backlog, 0);
    t.equal(await ledgerCount(store), 5);
    const k1ok = await store.db.selectFrom('usage_hourly').selectAll().where('key_id', '=', 'k1').where('status', '=', 200).executeTakeFirstOrThrow();
    t.match(k1ok, { bucket: hour, requests: 2, errors: 0, cost_nano: 2000, prompt_tokens: 20, completion_tokens: 10, cached_tokens: 4, latency_ms_sum: 750, ttft_ms_sum: 20, ttft_count: 1, lat_0_100: 1, lat_500_1000: 1 });
    const failed = await store.db.selectFrom('usage_hourly').selectAll().where('status', '=', 503).executeTakeFirstOrThrow();
    t.match(failed, { requests: 1, errors: 1, lat_60000_inf: 1, cost_nano: 0 });
    const call = await store.db.selectFrom('usage_hourly').selectAll().where('status', '=', 0).executeTakeFirstOrThrow();
    t.match(call, { requests: 0, errors: 0, cost_nano: 500 }, 'a billed failed call adds its cost, not a request');
    const hit = await store.db.selectFrom('usage_daily').selectAll().where('key_id', '=', 'k2').executeTakeFirstOrThrow();
    t.match(hit, { bucket: NOW - (NOW % DAY_MS), requests: 1, cache_hits: 1, saved_nano: 800 });
    t.same(await totals(store, 'usage_hourly'), await totals(store, 'usage_daily'), 'hourly and daily rollups agree');
  });

  t.test(`${engine}: a batch written again (a retry after a commit whose answer was lost) counts nothing twice`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const rows = Array.from({ length: 50 }, (_, i) => ledgerRow({ at: NOW + i }));
    const first = writer(t, store);
    first.add(rows);
    await first.flush();
    const second = writer(t, store);
    second.add(rows.map((row) => ({ ...row })));
    second.add([ledgerRow()]);
    await second.flush();
    t.equal(await ledgerCount(store), 51);
    t.match(await totals(store, 'usage_daily'), { requests: 51, cost_nano: 51_000 }, 'only the new row was added to the rollups');
  });

  t.test(`${engine}: while the database refuses writes the rows wait; past the bound the writer stops accepting; then every row lands once`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const ledger = writer(t, store, 150);
    await sql`alter table ledger rename to ledger_away`.execute(store.db);
    ledger.add(Array.from({ length: 100 }, () => ledgerRow()));
    await t.rejects(ledger.flush(), 'the write fails');
    t.equal(ledger.backlog, 100, 'nothing was dropped');
    t.equal(ledger.accepting, true);
    ledger.add(Array.from({ length: 60 }, () => ledgerRow()));
    t.equal(ledger.accepting, false, 'past the bound: paid requests are to be refused');
    ledger.add([ledgerRow({ costNano: 0, cacheHit: true }), ledgerRow({ costNano: 7 })]);
    t.equal(ledger.backlog, 161, 'past it, a row without a cost (a cache hit) is dropped, one with a cost is kept');
    await sql`alter table ledger_away rename to ledger`.execute(store.db);
    await ledger.flush();
    t.equal(ledger.backlog, 0);
    t.equal(ledger.accepting, true);
    t.equal(await ledgerCount(store), 161);
    t.match(await totals(store, 'usage_daily'), { requests: 161, cost_nano: 160_007 }, 'each counted once');
  });

  t.test(`${engine}: close writes what is queued; a row settled after close is logged, not silently lost`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const lines: Array<{ msg: string; rows?: number; usd?: number }> = [];
    const ledger = new LedgerWriter(store, pino({ level: 'error' }, { write: (line: string) => void lines.push(JSON.parse(line)) }), { flushMs: 60_000, maxBacklog: 100 });
    ledger.add([ledgerRow(), ledgerRow()]);
    await ledger.close();
    t.equal(await ledgerCount(store), 2);
    ledger.add([ledgerRow({ costNano: 5e9 })]);
    t.match(lines, [{ msg: 'ledger: rows settled after the ledger closed were not written', rows: 1, usd: 5 }]);
  });

  t.test(`${engine}: amounts a usage report garbles (fractions, NaN) and control characters are made storable, not a batch that never writes`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const ledger = writer(t, store);
    ledger.add([ledgerRow({ promptTokens: 1.5, completionTokens: Number.NaN, latencyMs: 12.7, model: 'gpt\u0000-4o', requestId: 'r\u0007' })]);
    await ledger.flush();
    const stored = await store.db.selectFrom('ledger').selectAll().executeTakeFirstOrThrow();
    t.match(stored, { prompt_tokens: 2, completion_tokens: 0, latency_ms: 13, model: 'gpt-4o', request_id: 'r' });
  });
}

t.test('sqlite: a large flush lets the event loop run between its transactions (a request is not held behind a whole second of rows)', async (t) => {
  const store = await openTestStore(t, 'sqlite', { migrated: true });
  const ledger = writer(t, store);
  ledger.add(Array.from({ length: 1000 }, () => ledgerRow()));
  let ranDuringFlush = 0;
  let flushing = true;
  const tick = () => {
    if (!flushing) return;
    ranDuringFlush++;
    setImmediate(tick);
  };
  setImmediate(tick);
  await ledger.flush();
  flushing = false;
  t.ok(ranDuringFlush >= 2, `the loop turned ${ranDuringFlush} times while 1000 rows were written`);
  t.equal(await ledgerCount(store), 1000, 'every row written');
  t.equal(Number((await totals(store, 'usage_daily')).requests), 1000, 'and counted once in the rollups');
});

t.test('postgres: three replicas upserting the same rollup rows at once, batch after batch, never deadlock and lose nothing', async (t) => {
  const schema = testSchema();
  const stores = await Promise.all([1, 2, 3].map((n) => openTestStore(t, 'postgres', { schema, migrated: n === 1 })));
  // Migrated by the first; the others wait for it.
  const writers = stores.map((store) => writer(t, store));
  const keys = ['k1', 'k2', 'k3', 'k4', 'k5'];
  const models = ['a', 'b', 'c'];
  for (let round = 0; round < 10; round++) {
    writers.forEach((ledger, w) => {
      // Each replica lists the same rollup keys in a different order: the writer sorts them.
      const order = w % 2 === 0 ? keys : [...keys].reverse();
      ledger.add(order.flatMap((keyId) => models.map((model) => ledgerRow({ keyId, model, at: NOW + round }))));
    });
    await Promise.all(writers.map((ledger) => ledger.flush()));
  }
  const expected = 3 * 10 * keys.length * models.length;
  t.equal(await ledgerCount(stores[0]!), expected);
  t.match(await totals(stores[0]!, 'usage_daily'), { rows: keys.length * models.length, requests: expected, cost_nano: expected * 1000 });
});

t.test('postgres: the ledger is partitioned by month, and a row whose month has no partition gets one', async (t) => {
  const store = await openTestStore(t, 'postgres', { migrated: true });
  const ledger = writer(t, store);
  const ahead = monthStart(NOW, 14) + 3 * DAY_MS;
  ledger.add([ledgerRow({ at: ahead }), ledgerRow()]);
  await ledger.flush();
  t.equal(await ledgerCount(store), 2);
  const names = (await listPartitions(store.db, store.schema)).map((partition) => partition.name);
  t.ok(names.includes(partitionName(monthStart(ahead))), `a partition for the month 14 months ahead: ${names}`);
  t.ok(names.length >= 5, 'and the months around now');
});

t.test('postgres: a row that cannot be written at all (stamped decades off) is set aside after three tries; the rest of its batch is written', async (t) => {
  const store = await openTestStore(t, 'postgres', { migrated: true });
  const lines: Array<{ msg: string }> = [];
  const ledger = new LedgerWriter(store, pino({ level: 'error' }, { write: (line: string) => void lines.push(JSON.parse(line)) }), { flushMs: 60_000, maxBacklog: 1000 });
  t.teardown(() => ledger.close());
  ledger.add([ledgerRow(), ledgerRow({ at: Date.UTC(2061, 0, 1) }), ledgerRow()]);
  await t.rejects(ledger.flush());
  await t.rejects(ledger.flush());
  await ledger.flush();
  t.equal(ledger.backlog, 0);
  t.equal(await ledgerCount(store), 2, 'the two good rows');
  t.match(lines, [{ msg: 'ledger: a row that cannot be written was set aside' }]);
});

t.test('postgres: a database that refuses every row (the fault is not in the rows) keeps them all queued', async (t) => {
  const store = await openTestStore(t, 'postgres', { migrated: true });
  const ledger = writer(t, store);
  await sql`alter table ledger rename to ledger_away`.execute(store.db);
  ledger.add(Array.from({ length: 10 }, () => ledgerRow()));
  for (let i = 0; i < 4; i++) await t.rejects(ledger.flush());
  t.equal(ledger.backlog, 10, 'nothing set aside');
  await sql`alter table ledger_away rename to ledger`.execute(store.db);
  await ledger.flush();
  t.equal(await ledgerCount(store), 10);
});

t.test('through the gateway: paid requests are refused (503) while the backlog is full, and served again once it is written', async (t) => {
  const upstream = await startFakeOpenAI();
  t.teardown(() => upstream.close());
  const dataDir = testDataDir();
  const gateway = await startGateway({
    ...PROTOCOL_ONLY,
    MODELGATE_DATA_DIR: dataDir,
    MODELGATE_RATE_LIMITING_ENABLED: 'false',
    MODELGATE_LEDGER_MAX_BACKLOG: '100',
    MODELGATE_LEDGER_FLUSH_INTERVAL: '20',
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_MODEL_CATALOG: testCatalog(),
  });
  t.teardown(() => gateway.close());
  // Another process's handle on the gateway's database: it takes the ledger away.
  const other = new Database(`${dataDir}/modelgate.db`);
  t.teardown(() => other.close());
  other.exec('alter table ledger rename to ledger_away');
  const body = JSON.stringify(chatRequest(16));
  const statuses: number[] = [];
  let refusal: { json: any; headers: Headers } | undefined;
  for (let i = 0; i < 110; i++) {
    const answer = await call(gateway.url, '/chat/completions', { body });
    statuses.push(answer.status);
    if (answer.status === 503) refusal ??= answer;
  }
  t.equal(statuses.filter((status) => status === 200).length, 100, 'answered until 100 rows waited');
  t.equal(statuses.filter((status) => status === 503).length, 10, 'then refused');
  t.equal(refusal?.json.error.code, 'ledger_unavailable');
  t.equal(refusal?.headers.get('retry-after'), '5');
  t.equal(upstream.requests.length, 100, 'nothing was sent upstream for the refused ones');

  other.exec('alter table usage_daily rename to usage_daily_away');
  const away = await call(gateway.url, '/usage');
  t.equal(away.status, 503, 'usage while the database cannot answer: 503, not 500');
  t.equal(away.json.error.code, 'usage_unavailable');
  t.equal(away.headers.get('retry-after'), '5');
  other.exec('alter table usage_daily_away rename to usage_daily');
  other.exec('alter table ledger_away rename to ledger');
  // GET /v1/usage writes the queue first (the timer's next try may be seconds away after failures).
  await call(gateway.url, '/usage');
  t.equal((await call(gateway.url, '/chat/completions', { body })).status, 200, 'served again once the backlog is written');
  await call(gateway.url, '/usage');
  const rows = other.prepare('select count(*) as n from ledger').get() as { n: number };
  t.equal(rows.n, 101, 'every answered request is in the ledger, once');
});
