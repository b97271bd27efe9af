// Migration 0008_analytics on both engines, over a database that already holds traffic: the new
// ledger and rollup columns read 0 (or null) on old rows, the model rollups hold what the per-key
// rollups held (summed over keys and tenants), and the ledger writer keeps both in step afterwards.
import t from 'tap';
import { pino } from 'pino';
import { randomUUID } from 'node:crypto';
import { migrate } from '../../core/store/migrate.js';
import { MIGRATIONS } from '../../core/store/migrations/index.js';
import { ENGINES, openTestStore } from '../helpers/database.js';
import { LedgerWriter } from '../../plugins/cost/ledger.js';
import type { LedgerRow } from '../../plugins/cost/ledger-row.js';

const HOUR = 3_600_000;
const BUCKET = Date.parse('2026-11-20T10:00:00Z');
const DAY = Date.parse('2026-11-20T00:00:00Z');

function old(bucket: number, keyId: string, requests: number, cost: number) {
  return { bucket, tenant: 'acme', key_id: keyId, provider: 'openai', model: 'gpt-4o-mini', status: 200, requests, errors: 0, cache_hits: 0, prompt_tokens: 10 * requests, completion_tokens: 5 * requests, cached_tokens: 0, cost_nano: cost, saved_nano: 0, latency_ms_sum: 100 * requests, ttft_ms_sum: 0, ttft_count: 0, lat_0_100: requests };
}

function row(keyId: string, at: number): LedgerRow {
  return { id: randomUUID(), at, requestId: 'r', kind: 'request', tenant: 'acme', keyId, provider: 'openai', model: 'gpt-4o-mini', status: 200, errorCode: null, cacheHit: false, promptTokens: 10, completionTokens: 5, cachedTokens: 0, costNano: 7, savedNano: 0, latencyMs: 50, ttftMs: null, epoch: null, attempts: 2, retries: 1, fallbacks: 0, overheadMs: 3 };
}

for (const engine of ENGINES) {
  t.test(`${engine}: 0008 applies over existing traffic and the model rollups start from it`, async (t) => {
    const store = await openTestStore(t, engine);
    const before = MIGRATIONS.findIndex((migration) => migration.name === '0008_analytics');
    t.ok(before > 0, '0008_analytics is listed');
    await migrate(store, MIGRATIONS.slice(0, before));
    const db = store.db as any;
    await db.insertInto('usage_daily').values([old(DAY, 'k1', 3, 300), old(DAY, 'k2', 2, 200)]).execute();
    await db.insertInto('usage_hourly').values([old(BUCKET, 'k1', 3, 300), old(BUCKET, 'k2', 2, 200)]).execute();

    const report = await migrate(store, MIGRATIONS);
    t.same(report.applied, MIGRATIONS.slice(before).map((migration) => migration.name));
    for (const table of ['usage_daily_models', 'usage_hourly_models']) {
      const rows = await db.selectFrom(table).selectAll().execute();
      t.equal(rows.length, 1, `${table}: one row for the two keys`);
      t.match(rows[0], { provider: 'openai', model: 'gpt-4o-mini', status: 200 });
      t.equal(Number(rows[0].requests), 5);
      t.equal(Number(rows[0].cost_nano), 500);
      t.equal(Number(rows[0].lat_0_100), 5);
      t.equal(Number(rows[0].retries), 0, 'what old rows did not record reads 0');
    }

    // Written after the migration: both rollups get the row, the model one summed over keys.
    const ledger = new LedgerWriter(store, pino({ level: 'silent' }), { flushMs: 60_000, maxBacklog: 1000 });
    ledger.add([row('k1', BUCKET + 10), row('k3', BUCKET + HOUR + 10)]);
    await ledger.close();
    const daily = await db.selectFrom('usage_daily_models').selectAll().execute();
    t.equal(daily.length, 1);
    t.equal(Number(daily[0].requests), 7);
    t.equal(Number(daily[0].cost_nano), 514);
    t.equal(Number(daily[0].retries), 2);
    t.equal(Number(daily[0].attempts), 4);
    t.equal(Number(daily[0].ovh_2_5), 2, 'overhead of 3 ms in (2, 5]');
    const hourly = await db.selectFrom('usage_hourly_models').selectAll().orderBy('bucket').execute();
    t.same(hourly.map((r: any) => [Number(r.bucket), Number(r.requests)]), [[BUCKET, 6], [BUCKET + HOUR, 1]]);
    const perKey = await db.selectFrom('usage_daily').select(['key_id', 'requests']).orderBy('key_id').execute();
    t.same(perKey.map((r: any) => [r.key_id, Number(r.requests)]), [['k1', 4], ['k2', 2], ['k3', 1]]);
  });
}
