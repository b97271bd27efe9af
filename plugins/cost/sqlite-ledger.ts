// The ledger's batch write on SQLite with statements prepared once: the same rows and rollups as the
// Kysely statements ledger.ts builds for PostgreSQL (insert, skip a row already written, add exactly
// the new rows to the hourly and daily rollups, per key and per model, and to the hourly error and circuit-opening rollups), each row a bind and a step. Runs inside the
// transaction ledger.ts opened on the same connection (better-sqlite3 is synchronous: nothing else
// runs on it meanwhile).
import type Database from 'better-sqlite3';
import type { LedgerTable, RollupTable } from '../../core/store/schema.js';
import { DAY_MS, HOUR_MS, KEY_COLUMNS, MODEL_KEY_COLUMNS, SUM_COLUMNS, byModel, rollUp } from './rollups.js';
import { CIRCUIT_KEY_COLUMNS, ERROR_KEY_COLUMNS, circuitDeltas, errorDeltas } from './error-rollups.js';

const LEDGER_COLUMNS = [
  'at',
  'id',
  'request_id',
  'kind',
  'tenant',
  'key_id',
  'provider',
  'model',
  'status',
  'error_code',
  'cache_hit',
  'prompt_tokens',
  'completion_tokens',
  'cached_tokens',
  'cost_nano',
  'saved_nano',
  'latency_ms',
  'ttft_ms',
  'budget_epoch',
  'attempts',
  'retries',
  'fallbacks',
  'overhead_ms',
  'error_message',
  'opened_circuits',
] as const satisfies ReadonlyArray<keyof LedgerTable>;
/** Every column of the ledger is written: a column added to LedgerTable and not here fails to compile. */
export const LEDGER_COLUMNS_COMPLETE: Exclude<keyof LedgerTable, (typeof LEDGER_COLUMNS)[number]> extends never ? true : never = true;

const ROLLUP_COLUMNS = [...KEY_COLUMNS, ...SUM_COLUMNS] as ReadonlyArray<keyof RollupTable>;
const MODEL_ROLLUP_COLUMNS = [...MODEL_KEY_COLUMNS, ...SUM_COLUMNS] as ReadonlyArray<keyof RollupTable>;
const quote = (name: string) => `"${name}"`;
const marks = (count: number) => Array(count).fill('?').join(', ');

export class SqliteLedger {
  private readonly insert: Database.Statement;
  private readonly hourly: Database.Statement;
  private readonly daily: Database.Statement;
  private readonly hourlyModels: Database.Statement;
  private readonly dailyModels: Database.Statement;
  private readonly errors: Database.Statement;
  private readonly circuits: Database.Statement;

  constructor(database: Database.Database) {
    this.insert = database
      .prepare(`insert into "ledger" (${LEDGER_COLUMNS.map(quote).join(', ')}) values (${marks(LEDGER_COLUMNS.length)}) on conflict ("at", "id") do nothing returning "id"`)
      .pluck();
    this.hourly = database.prepare(upsert('usage_hourly', KEY_COLUMNS));
    this.daily = database.prepare(upsert('usage_daily', KEY_COLUMNS));
    this.hourlyModels = database.prepare(upsert('usage_hourly_models', MODEL_KEY_COLUMNS));
    this.dailyModels = database.prepare(upsert('usage_daily_models', MODEL_KEY_COLUMNS));
    this.errors = database.prepare(upsertCount('usage_errors_hourly', ERROR_KEY_COLUMNS, 'count'));
    this.circuits = database.prepare(upsertCount('circuit_openings_hourly', CIRCUIT_KEY_COLUMNS, 'openings'));
  }

  /** Writes `records`; returns those that were new (a retried batch's rows already written are not). */
  write(records: readonly LedgerTable[]): LedgerTable[] {
    const values: unknown[] = new Array(LEDGER_COLUMNS.length);
    const fresh: LedgerTable[] = [];
    for (const record of records) {
      for (let i = 0; i < LEDGER_COLUMNS.length; i++) values[i] = record[LEDGER_COLUMNS[i]!];
      if (this.insert.get(values) !== undefined) fresh.push(record);
    }
    if (fresh.length === 0) return fresh;
    for (const [statement, models, size] of [
      [this.hourly, this.hourlyModels, HOUR_MS],
      [this.daily, this.dailyModels, DAY_MS],
    ] as const) {
      const deltas = rollUp(fresh, size);
      for (const delta of deltas) statement.run(ROLLUP_COLUMNS.map((column) => delta[column]));
      for (const delta of byModel(deltas)) models.run(MODEL_ROLLUP_COLUMNS.map((column) => (delta as RollupTable)[column]));
    }
    for (const delta of errorDeltas(fresh)) this.errors.run([...ERROR_KEY_COLUMNS.map((column) => delta[column]), delta.count]);
    for (const delta of circuitDeltas(fresh)) this.circuits.run([...CIRCUIT_KEY_COLUMNS.map((column) => delta[column]), delta.openings]);
    return fresh;
  }
}

function upsert(table: string, keys: readonly string[]): string {
  const columns = [...keys, ...SUM_COLUMNS];
  const sums = SUM_COLUMNS.map((column) => `${quote(column)} = ${quote(table)}.${quote(column)} + excluded.${quote(column)}`).join(', ');
  return `insert into ${quote(table)} (${columns.map(quote).join(', ')}) values (${marks(columns.length)}) on conflict (${keys.map(quote).join(', ')}) do update set ${sums}`;
}

function upsertCount(table: string, keys: readonly string[], count: string): string {
  const columns = [...keys, count].map(quote).join(', ');
  return `insert into ${quote(table)} (${columns}) values (${marks(keys.length + 1)}) on conflict (${keys.map(quote).join(', ')}) do update set ${quote(count)} = ${quote(table)}.${quote(count)} + excluded.${quote(count)}`;
}
