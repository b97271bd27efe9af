// npm run bench:analytics: how fast the /v1/analytics reports answer over a month of rollups. Seeds
// 30 days of hourly and daily rollups for 1,000 keys × 20 models (4 providers; each key on 2 models
// an hour, rotating, so on all 20 every day: 1.44 M hourly rows, 600 k daily rows; and the model
// rollups summed from them), hourly error
// rows (60 an hour) and circuit openings into a fresh SQLite file and a fresh PostgreSQL schema
// (dropped after), in batched inserts, then times the report functions the routes call (the
// queries and the shaping, not HTTP): cost by model and key over the last week, errors over the
// last 24 hours, p95 latency per provider over the last 7 days, usage per provider over the last
// 24 hours. Each is run once to warm up, then BENCH_RUNS times (default 5); the median and the
// slowest are printed. The target is under 200 ms each. MODELGATE_TEST_DATABASE_URL names the
// PostgreSQL (default postgres://postgres@127.0.0.1:5432/test); BENCH_ENGINES=sqlite skips it;
// BENCH_SQLITE_DIR and BENCH_PG_SCHEMA keep the seeded data for the next run (seeded when empty).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { pino } from 'pino';
import { openSqlite, openStore, type Store } from '../core/store/database.js';
import { migrate } from '../core/store/migrate.js';
import { MIGRATIONS } from '../core/store/migrations/index.js';
import type { RollupTable } from '../core/store/schema.js';
import { HOUR_MS, DAY_MS, KEY_COLUMNS, MODEL_KEY_COLUMNS, SUM_COLUMNS, LATENCY_COLUMNS, OVERHEAD_COLUMNS, byModel } from '../plugins/cost/rollups.js';
import { ERROR_KEY_COLUMNS } from '../plugins/cost/error-rollups.js';
import { parseAnalyticsQuery, type ReportName } from '../plugins/cost/analytics-params.js';
import { runReport } from '../plugins/cost/analytics-routes.js';

const DAYS = 30;
const KEYS = 1000;
const MODELS = 20;
const PROVIDERS = ['openai', 'anthropic', 'google', 'mistral'];
const MODELS_PER_KEY_HOUR = 2;
const ERRORS_PER_HOUR = 60;
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const TARGET_MS = 200;
const DATABASE_URL = process.env.MODELGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',');
const BATCH = 5000;

const ROLLUP_COLUMNS = [...KEY_COLUMNS, ...SUM_COLUMNS] as Array<keyof RollupTable>;
const MODEL_ROLLUP_COLUMNS = [...MODEL_KEY_COLUMNS, ...SUM_COLUMNS] as string[];
const ERROR_COLUMNS = [...ERROR_KEY_COLUMNS, 'count'] as const;
const CODES = [
  ['rate_limit_exceeded', 429, 'Rate limit reached for requests'],
  ['provider_error', 500, 'The server had an error while processing your request'],
  ['bad_gateway', 502, 'Upstream answered with an invalid body'],
  ['provider_unavailable', 503, 'The engine is currently overloaded'],
  ['invalid_request', 400, 'This model maximum context length is 128000 tokens'],
] as const;

/** A small deterministic generator: the same data on both engines, run after run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state;
  };
}

const model = (index: number) => `model-${String(index).padStart(2, '0')}`;
const provider = (index: number) => PROVIDERS[index % PROVIDERS.length]!;
const key = (index: number) => `key_${String(index).padStart(4, '0')}`;

function hourlyRow(bucket: number, k: number, m: number, next: () => number): RollupTable {
  const requests = 1 + (next() % 20);
  const row = { bucket, tenant: 'bench', key_id: key(k), provider: provider(m), model: model(m), status: 200 } as RollupTable;
  for (const column of SUM_COLUMNS) (row[column] as number) = 0;
  row.requests = requests;
  row.errors = next() % 10 === 0 ? 1 : 0;
  row.cache_hits = next() % 5 === 0 ? 1 : 0;
  row.prompt_tokens = requests * (100 + (next() % 900));
  row.completion_tokens = requests * (20 + (next() % 300));
  row.cost_nano = row.prompt_tokens * 150 + row.completion_tokens * 600;
  row.saved_nano = row.cache_hits * 40_000;
  row.latency_ms_sum = requests * (300 + (next() % 2000));
  row.attempts = requests + row.errors;
  row.retries = row.errors;
  for (let i = 0; i < requests; i++) {
    (row[LATENCY_COLUMNS[Math.min(next() % 7, LATENCY_COLUMNS.length - 1)]!] as number) += 1;
    (row[OVERHEAD_COLUMNS[next() % 4]!] as number) += 1;
  }
  row.overhead_ms_sum = requests * 3;
  row.ttft_count = Math.floor(requests / 2);
  row.ttft_ms_sum = row.ttft_count * 250;
  row.gen_tokens = row.completion_tokens;
  row.gen_ms_sum = requests * 1500;
  return row;
}

interface Seed {
  hourly: RollupTable[][];
  daily: RollupTable[];
  errors: Array<Record<(typeof ERROR_COLUMNS)[number], string | number>>;
  circuits: Array<Record<string, string | number>>;
}

/** The data, hour by hour (yielded so a batch is written before the next is made). */
function* seed(now: number): Generator<Seed> {
  const next = random(17);
  // Whole UTC days, today the last: each day's daily rows are made from its own 24 hours.
  const firstHour = now - (now % DAY_MS) - (DAYS - 1) * DAY_MS;
  for (let day = 0; day < DAYS; day++) {
    const dailyRows = new Map<string, RollupTable>();
    const hourly: RollupTable[][] = [];
    const errors: Seed['errors'] = [];
    const circuits: Seed['circuits'] = [];
    for (let hour = 0; hour < 24; hour++) {
      const bucket = firstHour + (day * 24 + hour) * HOUR_MS;
      const rows: RollupTable[] = [];
      for (let k = 0; k < KEYS; k++) {
        for (let j = 0; j < MODELS_PER_KEY_HOUR; j++) {
          const m = (k + j * 7 + hour) % MODELS;
          const row = hourlyRow(bucket, k, m, next);
          rows.push(row);
          const dayBucket = bucket - (bucket % DAY_MS);
          const id = `${dayBucket}|${row.key_id}|${row.model}`;
          const daily = dailyRows.get(id);
          if (!daily) dailyRows.set(id, { ...row, bucket: dayBucket });
          else for (const column of SUM_COLUMNS) (daily[column] as number) += row[column] as number;
        }
      }
      hourly.push(rows);
      const seen = new Set<string>();
      for (let e = 0; e < ERRORS_PER_HOUR; e++) {
        const [code, status, message] = CODES[next() % CODES.length]!;
        const k = next() % KEYS;
        const m = next() % MODELS;
        const id = `${k}|${m}|${code}`;
        if (seen.has(id)) continue;
        seen.add(id);
        errors.push({ bucket, tenant: 'bench', key_id: key(k), provider: provider(m), model: model(m), status, code, message, count: 1 + (next() % 5) });
      }
      const m = next() % MODELS;
      circuits.push({ bucket, tenant: 'bench', key_id: key(next() % KEYS), provider: provider(m), model: model(m), openings: 1 });
    }
    yield { hourly, daily: [...dailyRows.values()], errors, circuits };
  }
}

async function insertPostgres(store: Store, table: string, columns: readonly string[], rows: ReadonlyArray<Record<string, unknown>>): Promise<void> {
  const type = (column: string) => (['tenant', 'key_id', 'provider', 'model', 'code', 'message'].includes(column) ? 'text' : column === 'status' ? 'integer' : 'bigint');
  for (let i = 0; i < rows.length; i += BATCH) {
    const batch = rows.slice(i, i + BATCH);
    // One array per column, unnested into rows: a few parameters however many rows.
    const arrays = columns.map((column) => sql`cast(${batch.map((row) => row[column])} as ${sql.raw(type(column))}[])`);
    await sql`insert into ${sql.table(table)} (${sql.join(columns.map((column) => sql.ref(column)))}) select * from unnest(${sql.join(arrays)})`.execute(store.db);
  }
}

function insertSqlite(store: Store, table: string, columns: readonly string[], rows: ReadonlyArray<Record<string, unknown>>): void {
  const database = store.sqlite!;
  const statement = database.prepare(`insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values (${columns.map(() => '?').join(', ')})`);
  database.transaction(() => {
    for (const row of rows) statement.run(columns.map((column) => row[column]));
  })();
}

async function fill(store: Store, now: number): Promise<{ hourly: number; daily: number; errors: number }> {
  const counts = { hourly: 0, daily: 0, errors: 0 };
  const insert = async (table: string, columns: readonly string[], rows: ReadonlyArray<Record<string, unknown>>) => {
    if (store.engine === 'postgres') await insertPostgres(store, table, columns, rows);
    else insertSqlite(store, table, columns, rows);
  };
  for (const day of seed(now)) {
    for (const rows of day.hourly) {
      await insert('usage_hourly', ROLLUP_COLUMNS, rows as never);
      await insert('usage_hourly_models', MODEL_ROLLUP_COLUMNS, byModel(rows) as never);
    }
    await insert('usage_daily', ROLLUP_COLUMNS, day.daily as never);
    await insert('usage_daily_models', MODEL_ROLLUP_COLUMNS, byModel(day.daily) as never);
    await insert('usage_errors_hourly', ERROR_COLUMNS, day.errors);
    await insert('circuit_openings_hourly', ['bucket', 'tenant', 'key_id', 'provider', 'model', 'openings'], day.circuits);
    counts.hourly += day.hourly.reduce((sum, rows) => sum + rows.length, 0);
    counts.daily += day.daily.length;
    counts.errors += day.errors.length;
  }
  if (store.engine === 'postgres') await sql`analyze`.execute(store.db);
  else store.sqlite!.exec('analyze');
  return counts;
}

const CASES: Array<{ name: string; report: ReportName; query: string }> = [
  { name: 'cost by model and key, last week (day buckets)', report: 'costs', query: 'start=7d&group_by=model,key' },
  { name: 'cost by model and key, last 30 d (SQLite: a week at a time)', report: 'costs', query: 'start=30d&group_by=model,key' },
  { name: 'errors, last 24 h (hour buckets, by code)', report: 'errors', query: 'start=24h' },
  { name: 'p95 latency per provider, last 7 d', report: 'metrics', query: 'start=7d&group_by=provider' },
  { name: 'usage per provider, last 24 h (hour buckets)', report: 'usage', query: 'start=24h&group_by=provider' },
  { name: 'one key: costs by model, last 30 d', report: 'costs', query: 'start=30d&group_by=model&key_id=key_0042' },
];

async function time(store: Store, now: number): Promise<Array<{ name: string; median: number; max: number; groups: number; series: number }>> {
  const results = [];
  for (const entry of CASES) {
    const query = parseAnalyticsQuery(entry.report, new URLSearchParams(entry.query), { now, hourlyRetentionDays: 30 });
    if (entry.query.includes('key_id=')) query.keyId = 'key_0042';
    const report = await runReport(store, entry.report, query);
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      await runReport(store, entry.report, query);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    results.push({ name: entry.name, median: times[Math.floor(times.length / 2)]!, max: times.at(-1)!, groups: report.groups.length, series: report.series.length });
  }
  return results;
}

async function open(engine: string): Promise<{ store: Store; cleanup: () => Promise<void> }> {
  if (engine === 'sqlite') {
    // BENCH_SQLITE_DIR keeps the seeded file for another run (seeded once, when it holds nothing yet).
    const kept = process.env.BENCH_SQLITE_DIR;
    const dir = kept ?? mkdtempSync(join(tmpdir(), 'modelgate-bench-analytics-'));
    const store = openSqlite(dir);
    return { store, cleanup: async () => void (kept ?? rmSync(dir, { recursive: true, force: true })) };
  }
  // BENCH_PG_SCHEMA keeps the seeded schema for another run, as BENCH_SQLITE_DIR the file.
  const kept = process.env.BENCH_PG_SCHEMA;
  const schema = kept ?? `modelgate_bench_analytics_${Date.now()}`;
  const store = await openStore(
    {
      MODELGATE_DATABASE_URL: DATABASE_URL,
      MODELGATE_DATABASE_SCHEMA: schema,
      MODELGATE_DATABASE_POOL_SIZE: 5,
      MODELGATE_DATA_DIR: '.',
      MODELGATE_LEDGER_RETENTION: 60,
      MODELGATE_METRICS_RETENTION: 365,
      MODELGATE_METRICS_HOURLY_RETENTION: 30,
    },
    pino({ level: 'silent' }),
  );
  return { store, cleanup: async () => void (kept ?? (await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(store.db))) };
}

const now = Date.now();
for (const engine of ENGINES) {
  const { store, cleanup } = await open(engine);
  try {
    await migrate(store, MIGRATIONS);
    const seeding = performance.now();
    const seeded = await store.db.selectFrom('usage_daily').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const counts = Number(seeded.n) > 0 ? { hourly: 0, daily: Number(seeded.n), errors: 0 } : await fill(store, now);
    console.log(`${engine}: seeded ${counts.hourly} hourly, ${counts.daily} daily, ${counts.errors} error rows in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);
    for (const result of await time(store, now)) {
      const verdict = result.max < TARGET_MS ? 'ok' : `over ${TARGET_MS} ms`;
      console.log(`  ${result.name}: median ${result.median.toFixed(1)} ms, slowest ${result.max.toFixed(1)} ms of ${RUNS} (${result.groups} groups, ${result.series} series rows) — ${verdict}`);
    }
  } finally {
    await cleanup();
    await store.close();
  }
}
