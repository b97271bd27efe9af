// Reading request records back for the admin API: pages newest first (created_at, then id, both
// descending; `after` is the last id of the previous page), and one record with its bodies
// decrypted. A record whose key is gone, or whose envelope does not authenticate, is still answered
// — its metadata, `bodies: null` and `decrypt_error` saying why — never a crash.
import type { Store } from '../store/database.js';
import type { RequestRecordTable } from '../store/schema.js';
import type { RecordKeys } from './keyring.js';
import { EnvelopeError, open, type RecordField } from './envelope.js';

export interface RecordQuery {
  limit: number;
  after?: string;
  /** Epoch ms, inclusive. */
  start?: number;
  /** Epoch ms, exclusive. */
  end?: number;
  keyId?: string;
  model?: string;
  status?: number;
  /** The pseudonym of the OpenAI `user` (Anonymizer.pseudonym). */
  endUser?: string;
}

type Metadata = Omit<RequestRecordTable, 'request_body' | 'response_body' | 'error_message'>;
const METADATA = [
  'id', 'created_at', 'request_id', 'tenant', 'key_id', 'api', 'model', 'provider', 'routed_model', 'status', 'error_code',
  'prompt_tokens', 'completion_tokens', 'cost_nano', 'latency_ms', 'ttft_ms', 'cache', 'stream', 'end_user', 'encryption_key', 'truncated',
] as const;

/** The admin API's view of a record's metadata. */
export function apiRecord(row: Metadata) {
  return {
    object: 'request_record',
    id: row.id,
    created_at: new Date(Number(row.created_at)).toISOString(),
    request_id: row.request_id,
    key_id: row.key_id,
    tenant: row.tenant,
    api: row.api,
    model: row.model,
    provider: row.provider,
    routed_model: row.routed_model,
    status: Number(row.status),
    error_code: row.error_code,
    usage: { prompt_tokens: Number(row.prompt_tokens), completion_tokens: Number(row.completion_tokens) },
    cost_usd: row.cost_nano === null ? null : Number(row.cost_nano) / 1e9,
    latency_ms: Number(row.latency_ms),
    ttft_ms: row.ttft_ms === null ? null : Number(row.ttft_ms),
    cache: row.cache,
    stream: Number(row.stream) === 1,
    user: row.end_user,
    encryption_key: row.encryption_key,
    truncated: { request: (Number(row.truncated) & 1) !== 0, response: (Number(row.truncated) & 2) !== 0 },
  };
}

export class RecordReader {
  constructor(
    private readonly store: Store,
    private readonly keys: RecordKeys | undefined,
  ) {}

  /** A page, newest first; `cursorFound` false when `after` names no record. */
  async list(query: RecordQuery): Promise<{ rows: Metadata[]; hasMore: boolean; cursorFound: boolean }> {
    let select = this.store.db.selectFrom('request_records').select(METADATA);
    if (query.after !== undefined) {
      const cursor = await this.store.db.selectFrom('request_records').select(['id', 'created_at']).where('id', '=', query.after).executeTakeFirst();
      if (!cursor) return { rows: [], hasMore: false, cursorFound: false };
      const at = Number(cursor.created_at);
      select = select.where((eb) => eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('id', '<', cursor.id)])]));
    }
    if (query.start !== undefined) select = select.where('created_at', '>=', query.start);
    if (query.end !== undefined) select = select.where('created_at', '<', query.end);
    if (query.keyId !== undefined) select = select.where('key_id', '=', query.keyId);
    if (query.model !== undefined) select = select.where((eb) => eb.or([eb('model', '=', query.model!), eb('routed_model', '=', query.model!)]));
    if (query.status !== undefined) select = select.where('status', '=', query.status);
    if (query.endUser !== undefined) select = select.where('end_user', '=', query.endUser);
    const rows = await select.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit + 1).execute();
    return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit, cursorFound: true };
  }

  /** One record with its bodies decrypted (or why they could not be); undefined when unknown. */
  async get(id: string) {
    const row = await this.store.db.selectFrom('request_records').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) return undefined;
    try {
      const read = (field: RecordField, value: string | null) => (value === null ? null : this.plain(row, field, value));
      const request = read('request', row.request_body);
      const response = read('response', row.response_body);
      const error = read('error', row.error_message);
      return { ...apiRecord(row), bodies: { request: parsed(request), response: parsed(response), error_message: error }, decrypt_error: null };
    } catch (error) {
      if (!(error instanceof EnvelopeError)) throw error;
      return { ...apiRecord(row), bodies: null, decrypt_error: { reason: error.reason, message: error.message } };
    }
  }

  private plain(row: RequestRecordTable, field: RecordField, value: string): string {
    if (row.encryption_key === null) return value;
    if (!this.keys) throw new EnvelopeError('key_unknown', `the ${field} field is encrypted (key ${row.encryption_key}) and this gateway has no record keys configured`);
    return open(this.keys, row.id, field, value);
  }
}

/** A stored body: its JSON, or the text itself when it was cut (no longer JSON). */
function parsed(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
