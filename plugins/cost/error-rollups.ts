// The hourly error and circuit-opening rollups (0008), summed from ledger rows like rollups.ts sums
// usage: requests with an error code, per key, provider, model, status, code and message (already
// redacted and anonymized on the row); and the circuits a request's failed calls opened, per the
// provider and model of the call that opened each. Deltas come out in primary-key order (no
// deadlock between replicas upserting the same rows).
import type { CircuitRollupTable, ErrorRollupTable, LedgerTable } from '../../core/store/schema.js';
import { HOUR_MS } from './rollups.js';

export const ERROR_KEY_COLUMNS = ['bucket', 'tenant', 'key_id', 'provider', 'model', 'status', 'code', 'message'] as const;
export const CIRCUIT_KEY_COLUMNS = ['bucket', 'tenant', 'key_id', 'provider', 'model'] as const;

/** At most this many circuits are read from one row (a chain of candidates is short; a row is never trusted to be). */
const MAX_CIRCUITS_PER_ROW = 16;

export function errorDeltas(records: readonly LedgerTable[]): ErrorRollupTable[] {
  const deltas = new Map<string, ErrorRollupTable>();
  for (const record of records) {
    if (record.kind !== 'request' || record.error_code === null) continue;
    const bucket = record.at - (record.at % HOUR_MS);
    const message = record.error_message ?? '';
    const row: ErrorRollupTable = { bucket, tenant: record.tenant, key_id: record.key_id, provider: record.provider, model: record.model, status: record.status, code: record.error_code, message, count: 0 };
    const id = ERROR_KEY_COLUMNS.map((column) => row[column]).join('\u0000');
    const existing = deltas.get(id);
    if (existing) existing.count += 1;
    else deltas.set(id, { ...row, count: 1 });
  }
  return [...deltas.values()].sort((a, b) => compare(a, b, ERROR_KEY_COLUMNS));
}

/** `[[provider, model], …]` of a row's opened_circuits; malformed text reads as none. */
export function openedCircuits(text: string | null): Array<[string, string]> {
  if (text === null) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    if (!Array.isArray(parsed)) return [];
    return parsed.slice(0, MAX_CIRCUITS_PER_ROW).filter((pair): pair is [string, string] => Array.isArray(pair) && typeof pair[0] === 'string' && typeof pair[1] === 'string');
  } catch {
    return [];
  }
}

export function circuitDeltas(records: readonly LedgerTable[]): CircuitRollupTable[] {
  const deltas = new Map<string, CircuitRollupTable>();
  for (const record of records) {
    for (const [provider, model] of openedCircuits(record.opened_circuits)) {
      const bucket = record.at - (record.at % HOUR_MS);
      const id = [bucket, record.tenant, record.key_id, provider, model].join('\u0000');
      const existing = deltas.get(id);
      if (existing) existing.openings += 1;
      else deltas.set(id, { bucket, tenant: record.tenant, key_id: record.key_id, provider, model, openings: 1 });
    }
  }
  return [...deltas.values()].sort((a, b) => compare(a, b, CIRCUIT_KEY_COLUMNS));
}

function compare<T>(a: T, b: T, columns: ReadonlyArray<keyof T>): number {
  for (const column of columns) {
    const x = a[column];
    const y = b[column];
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}
