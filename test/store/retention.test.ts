// The retention sweeper on both engines: ledger rows past MODELGATE_LEDGER_RETENTION go (whole
// monthly partitions dropped on PostgreSQL, batched deletes and an incremental vacuum on SQLite),
// hourly and daily rollups past their own retention go, recent ones stay; one replica at a time
// sweeps (a lease).
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { pino } from 'pino';
import { RetentionSweeper } from '../../core/store/retention.js';
import { listPartitions, partitionName, monthStart } from '../../core/store/partitions.js';
import { takeLease } from '../../core/store/lease.js';
import { LedgerWriter } from '../../plugins/cost/ledger.js';
import type { LedgerRow } from '../../plugins/cost/ledger-row.js';
import type { Store } from '../../core/store/database.js';
import { ENGINES, openTestStore, testSchema } from '../helpers/database.js';

const silent = pino({ level: 'silent' });
const DAY = 86_400_000;
const NOW = Date.now();
const SETTINGS = { MODELGATE_LEDGER_RETENTION: 60, MODELGATE_METRICS_RETENTION: 365, MODELGATE_METRICS_HOURLY_RETENTION: 30 };

function row(at: number): LedgerRow {
  return { id: randomUUID(), at, requestId: 'r', kind: 'request', tenant: 'default', keyId: 'k1', provider: 'openai', model: 'm', status: 200, errorCode: null, cacheHit: false, promptTokens: 1, completionTokens: 1, cachedTokens: 0, costNano: 10, savedNano: 0, latencyMs: 5, ttftMs: null, epoch: null };
}

async function write(store: Store, rows: LedgerRow[]): Promise<void> {
  const ledger = new LedgerWriter(store, silent, { flushMs: 60_000, maxBacklog: 1_000_000 });
  ledger.add(rows);
  await ledger.close();
}

const count = async (store: Store, table: 'ledger' | 'usage_hourly' | 'usage_daily' | 'usage_hourly_models' | 'usage_daily_models' | 'usage_errors_hourly' | 'circuit_openings_hourly', before?: number) => {
  let query = store.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n'));
  if (before !== undefined) query = query.where(table === 'ledger' ? 'at' : 'bucket', '<', before) as typeof query;
  return Number((await query.executeTakeFirstOrThrow()).n);
};

for (const engine of ENGINES) {
  t.test(`${engine}: old ledger rows and rollups go, recent ones stay`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const old = NOW - 100 * DAY;
    await write(store, [...Array.from({ length: 12_000 }, (_, i) => row(old + i)), ...Array.from({ length: 100 }, (_, i) => row(NOW - i))]);
    // Rollups older than a year (daily) and than 30 days (hourly), as a long-running gateway has them.
    await write(store, [row(NOW - 400 * DAY), row(NOW - 40 * DAY)]);
    // Errors and circuit openings (hourly only), 40 days old and recent.
    const failed = (at: number): LedgerRow => ({ ...row(at), status: 502, errorCode: 'bad_gateway', errorMessage: 'bad', openedCircuits: [['openai', 'm']] });
    await write(store, [failed(NOW - 40 * DAY), failed(NOW)]);
    const sweeper = new RetentionSweeper(store, SETTINGS, silent);
    t.teardown(() => sweeper.close());

    const started = performance.now();
    const report = await sweeper.sweep(NOW);
    t.comment(`${engine}: the sweep took ${Math.round(performance.now() - started)} ms`);
    t.equal(report.ran, true);
    if (engine === 'postgres') {
      t.ok(report.ledgerPartitionsDropped.includes(partitionName(monthStart(old))), `the month of the old rows was dropped whole: ${report.ledgerPartitionsDropped}`);
      t.equal(report.ledgerRowsDeleted, 0, 'no row was deleted one by one');
      t.notOk((await listPartitions(store.db, store.schema)).some((p) => p.name === partitionName(monthStart(old))));
      t.ok((await listPartitions(store.db, store.schema)).some((p) => p.name === partitionName(monthStart(NOW, 2))), 'partitions ahead exist');
    } else {
      t.equal(report.ledgerRowsDeleted, 12_002 - 1, 'deleted in batches: every row older than 60 days');
      const { rows } = await sql<{ freelist_count: number }>`pragma freelist_count`.execute(store.db);
      t.equal(Number(rows[0]!.freelist_count), 0, 'the freed pages went back to the file system');
    }
    t.equal(await count(store, 'ledger', NOW - 60 * DAY), 0, 'no ledger row older than 60 days');
    t.equal(await count(store, 'ledger'), 103, 'recent rows stay (those of 40 days ago too)');
    t.equal(await count(store, 'usage_daily', NOW - 365 * DAY - DAY), 0, 'no daily rollup older than a year');
    t.ok((await count(store, 'usage_daily', NOW - 90 * DAY)) > 0, 'daily rollups of 100 days ago stay');
    t.equal(await count(store, 'usage_hourly', NOW - 30 * DAY - 3_600_000), 0, 'no hourly rollup older than 30 days');
    t.ok((await count(store, 'usage_hourly')) > 0, 'recent hourly rollups stay');
    t.equal(await count(store, 'usage_daily_models', NOW - 365 * DAY - DAY), 0, 'no daily model rollup older than a year');
    t.ok((await count(store, 'usage_daily_models', NOW - 90 * DAY)) > 0, 'daily model rollups of 100 days ago stay');
    t.equal(await count(store, 'usage_hourly_models', NOW - 30 * DAY - 3_600_000), 0, 'no hourly model rollup older than 30 days');
    t.ok((await count(store, 'usage_hourly_models')) > 0, 'recent hourly model rollups stay');
    for (const table of ['usage_errors_hourly', 'circuit_openings_hourly'] as const) {
      t.equal(await count(store, table, NOW - 30 * DAY - 3_600_000), 0, `${table}: nothing older than 30 days`);
      t.equal(await count(store, table), 1, `${table}: the recent hour stays`);
    }
  });

  t.test(`${engine}: alert firings of periods long over go`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    await store.db.insertInto('budget_alerts').values([
      { scope: 'global', period: 'day:2020-01-01', rule: '0.5:email', fired_at: NOW - 100 * DAY },
      { scope: 'global', period: 'day:today', rule: '0.5:email', fired_at: NOW },
    ]).execute();
    const sweeper = new RetentionSweeper(store, SETTINGS, silent);
    t.teardown(() => sweeper.close());
    t.equal((await sweeper.sweep(NOW)).alertsDeleted, 1);
  });
}

t.test('one replica at a time sweeps: the lease holder, until it lapses', async (t) => {
  const schema = testSchema();
  const a = await openTestStore(t, 'postgres', { schema, migrated: true });
  const b = await openTestStore(t, 'postgres', { schema });
  const first = new RetentionSweeper(a, SETTINGS, silent, 60_000);
  t.teardown(() => first.close());
  t.equal((await first.sweep(NOW)).ran, true);
  // Another replica: another holder of the same lease.
  t.equal(await takeLease(b, 'retention', 60_000, 'other-replica', NOW + 1000), false, 'held by the first for its interval');
  t.equal(await takeLease(b, 'retention', 60_000, 'other-replica', NOW + 61_000), true, 'free once it lapsed');
  t.equal((await first.sweep(NOW + 62_000)).ran, false, 'and then the first one skips');
});
