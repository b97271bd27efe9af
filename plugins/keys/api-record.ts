// A key as the admin API shows it: never its secret or hash, only its prefix. Times are ISO 8601 or
// null; `limits` and `allowed_models` are null when the key sets none (the gateway's defaults apply).
import { parseAllowed, parseLimits, type KeyRow } from './key-rows.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function apiRecord(row: KeyRow) {
  return {
    object: 'api_key' as const,
    id: row.id,
    name: row.name,
    owner: row.owner,
    prefix: row.prefix,
    status: row.status,
    admin: row.admin === 1,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    last_used_at: iso(row.last_used_at),
    expires_at: iso(row.expires_at),
    limits: parseLimits(row),
    allowed_models: parseAllowed(row),
  };
}
