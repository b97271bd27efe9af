// Usage rollups: ledger rows summed per bucket (hour or UTC day), tenant, key, provider, model and
// status — requests, errors, cache hits, tokens in/out/cached, cost, what the cache saved, latency
// (a sum and a histogram), time to first token, and (0008) upstream calls, retries, fallbacks, the
// gateway's overhead (a sum and a histogram) and tokens per second's inputs. Deltas come out sorted in the primary key's
// order, so replicas upserting the same rows lock them in the same order and never deadlock.
import type { LedgerTable, ModelRollupTable, RollupTable } from '../../core/store/schema.js';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** Upper bounds (ms) of the latency histogram's buckets; the last column holds everything above. */
export const LATENCY_BOUNDS = [100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000] as const;
export const LATENCY_COLUMNS = [...LATENCY_BOUNDS.map((bound, i) => `lat_${i === 0 ? 0 : LATENCY_BOUNDS[i - 1]}_${bound}`), `lat_${LATENCY_BOUNDS.at(-1)}_inf`] as Array<keyof RollupTable>;

/** Upper bounds (ms) of the gateway overhead histogram's buckets (0008); the last column holds everything above. */
export const OVERHEAD_BOUNDS = [1, 2, 5, 10, 25, 50, 100, 250] as const;
export const OVERHEAD_COLUMNS = [...OVERHEAD_BOUNDS.map((bound, i) => `ovh_${i === 0 ? 0 : OVERHEAD_BOUNDS[i - 1]}_${bound}`), `ovh_${OVERHEAD_BOUNDS.at(-1)}_inf`] as Array<keyof RollupTable>;

export const KEY_COLUMNS = ['bucket', 'tenant', 'key_id', 'provider', 'model', 'status'] as const;
/** The primary key of the model rollups (0008): the same without tenant and key. */
export const MODEL_KEY_COLUMNS = ['bucket', 'provider', 'model', 'status'] as const;
export const SUM_COLUMNS = [
  'requests',
  'errors',
  'cache_hits',
  'prompt_tokens',
  'completion_tokens',
  'cached_tokens',
  'cost_nano',
  'saved_nano',
  'latency_ms_sum',
  'ttft_ms_sum',
  'ttft_count',
  ...LATENCY_COLUMNS,
  'attempts',
  'retries',
  'fallbacks',
  'overhead_ms_sum',
  ...OVERHEAD_COLUMNS,
  'gen_ms_sum',
  'gen_tokens',
] as Array<keyof RollupTable>;

function histogramColumn(bounds: readonly number[], columns: Array<keyof RollupTable>, ms: number): keyof RollupTable {
  const index = bounds.findIndex((bound) => ms <= bound);
  return columns[index === -1 ? columns.length - 1 : index]!;
}

function empty(record: LedgerTable, bucket: number): RollupTable {
  const row = { bucket, tenant: record.tenant, key_id: record.key_id, provider: record.provider, model: record.model, status: record.status } as RollupTable;
  for (const column of SUM_COLUMNS) (row[column] as number) = 0;
  return row;
}

/** The rollup deltas of `records` for buckets of `size` ms, in primary-key order. */
export function rollUp(records: readonly LedgerTable[], size: number): RollupTable[] {
  const deltas = new Map<string, RollupTable>();
  for (const record of records) {
    const bucket = record.at - (record.at % size);
    const id = `${bucket}\u0000${record.tenant}\u0000${record.key_id}\u0000${record.provider}\u0000${record.model}\u0000${record.status}`;
    let row = deltas.get(id);
    if (!row) deltas.set(id, (row = empty(record, bucket)));
    row.cost_nano += record.cost_nano;
    row.prompt_tokens += record.prompt_tokens;
    row.completion_tokens += record.completion_tokens;
    row.cached_tokens += record.cached_tokens;
    // A failed call a provider bills adds its cost to its model; only requests are counted as such.
    if (record.kind !== 'request') continue;
    row.requests += 1;
    if (record.error_code !== null) row.errors += 1;
    if (record.cache_hit) row.cache_hits += 1;
    row.saved_nano += record.saved_nano;
    row.latency_ms_sum += record.latency_ms;
    (row[histogramColumn(LATENCY_BOUNDS, LATENCY_COLUMNS, record.latency_ms)] as number) += 1;
    if (record.ttft_ms !== null) {
      row.ttft_ms_sum += record.ttft_ms;
      row.ttft_count += 1;
    }
    row.attempts += record.attempts;
    row.retries += record.retries;
    row.fallbacks += record.fallbacks;
    // As the metrics' gateway_overhead_seconds: requests that reached a provider (a cache hit's whole
    // time is the gateway's and would read as overhead). The histogram's total is their count.
    if (record.attempts > 0) {
      row.overhead_ms_sum += record.overhead_ms;
      (row[histogramColumn(OVERHEAD_BOUNDS, OVERHEAD_COLUMNS, record.overhead_ms)] as number) += 1;
    }
    // Generation speed: answers a provider made (not the cache's, not failures), from the first
    // token to the end for a stream (the time before it is the prompt's), the whole call otherwise.
    if (record.error_code === null && !record.cache_hit && record.completion_tokens > 0) {
      row.gen_tokens += record.completion_tokens;
      row.gen_ms_sum += Math.max(1, record.latency_ms - (record.ttft_ms ?? 0));
    }
  }
  return [...deltas.values()].sort(byKey);
}

function byKey(a: RollupTable, b: RollupTable): number {
  for (const column of KEY_COLUMNS) {
    const x = a[column];
    const y = b[column];
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** `deltas` (of rollUp) summed over tenants and keys: the model rollups' deltas, in their primary-key order. */
export function byModel(deltas: readonly RollupTable[]): ModelRollupTable[] {
  const folded = new Map<string, ModelRollupTable>();
  for (const delta of deltas) {
    const id = `${delta.bucket}\u0000${delta.provider}\u0000${delta.model}\u0000${delta.status}`;
    const row = folded.get(id);
    if (!row) {
      const { tenant: _tenant, key_id: _key, ...rest } = delta;
      folded.set(id, { ...rest });
    } else for (const column of SUM_COLUMNS) (row[column as keyof ModelRollupTable] as number) += delta[column] as number;
  }
  return [...folded.values()].sort((a, b) => {
    for (const column of MODEL_KEY_COLUMNS) if (a[column] !== b[column]) return a[column] < b[column] ? -1 : 1;
    return 0;
  });
}
