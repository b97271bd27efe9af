// What a request record is made of. capture() runs when a request has ended (an observer) and only
// keeps references to what the context already holds — no copy, no serialization — so the request
// path pays nothing. toRow() does the work later, in the writer's batches: clip, anonymize, encrypt.
import { randomBytes } from 'node:crypto';
import type { RequestContext } from '../context.js';
import type { Anonymizer, Clock } from '../anonymize.js';
import type { RequestRecordTable } from '../store/schema.js';
import type { RecordKeys } from './keyring.js';
import { seal } from './envelope.js';
import { redactText } from '../redact.js';
import { transformStrings } from '../sliced-text.js';
import { clipStrings, type Budget } from '../string-walk.js';

export interface Capture {
  id: string;
  createdAt: number;
  requestId: string;
  tenant: string;
  keyId: string;
  api: RequestRecordTable['api'];
  model: string;
  provider: string | null;
  routedModel: string | null;
  status: number;
  errorCode: string | null;
  errorMessage: string | null;
  promptTokens: number;
  completionTokens: number;
  costUsd: number | undefined;
  latencyMs: number;
  ttftMs: number | null;
  cache: string | null;
  stream: boolean;
  user: string | undefined;
  /** The client's request as it was parsed (references, not copies). */
  request: unknown;
  /** The answer: a completion object, an embeddings summary, or the streamed text pieces. */
  response: { json: unknown } | { pieces: readonly string[] } | undefined;
  /** Rough bytes held (for the backlog's byte bound). */
  bytes: number;
}

/** A record of `ctx`, or undefined for requests that are not recorded (no key, no parsed body). */
export function capture(ctx: RequestContext): Capture | undefined {
  const chat = ctx.chat;
  const principal = ctx.principal;
  if (!chat || !principal) return undefined;
  const outcome = ctx.outcome;
  const latencyMs = performance.now() - ctx.startedAt;
  const request = chat.api === 'responses' ? chat.responses?.request : chat.api === 'embeddings' ? chat.embeddings?.request : chat.body;
  let response: Capture['response'];
  // What the capture keeps alive until written: the parsed body (about its size as received) and the answer.
  let bytes = chat.bodyBytes ?? (Number(ctx.headers['content-length']) || 0);
  if (outcome.embeddings) {
    // Vectors say nothing to a reader and are large: how many, of what size.
    const data = outcome.embeddings.data ?? [];
    response = { json: { object: 'list', model: outcome.embeddings.model, embeddings: data.length, dimensions: Array.isArray(data[0]?.embedding) ? data[0].embedding.length : undefined, usage: outcome.embeddings.usage } };
  } else if (outcome.completion) {
    response = { json: outcome.completion };
    bytes += outcome.completionJson?.length ?? 1024 + 8 * (outcome.usage?.completion_tokens ?? 512);
  } else if (outcome.generated.length > 0) {
    response = { pieces: outcome.generated };
    for (const piece of outcome.generated) bytes += piece.length;
  }
  const user = (request as { user?: unknown } | undefined)?.user;
  return {
    id: `rec_${randomBytes(16).toString('hex')}`,
    createdAt: Math.round(Date.now() - latencyMs),
    requestId: ctx.id,
    tenant: principal.tenant,
    keyId: principal.keyId,
    api: chat.api,
    model: chat.body.model,
    provider: outcome.target?.provider.name ?? null,
    routedModel: outcome.target?.model.id ?? null,
    status: ctx.status ?? 0,
    errorCode: ctx.error ? (ctx.error.code ?? ctx.error.kind) : outcome.interrupted === 'upstream_error' ? 'stream_failed' : ctx.status === 499 ? 'client_closed' : null,
    errorMessage: ctx.error?.message ?? outcome.streamFailure?.message ?? null,
    promptTokens: outcome.usage?.prompt_tokens ?? 0,
    completionTokens: outcome.usage?.completion_tokens ?? 0,
    costUsd: outcome.cost,
    latencyMs,
    ttftMs: outcome.ttftMs ?? null,
    cache: outcome.cache ?? null,
    stream: chat.stream,
    user: typeof user === 'string' && user.length > 0 ? user : undefined,
    request,
    response,
    bytes: bytes + 512,
  };
}

export interface RowOptions {
  anonymizer: Anonymizer;
  /** Undefined: encryption is off, bodies are stored as JSON. */
  keys: RecordKeys | undefined;
  maxBodyBytes: number;
}

/** Text the client influences in plain columns is clipped: a row's metadata stays small. */
// Control characters (NUL among them: PostgreSQL refuses it in text) never reach the database.
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;
const clip = (text: string, max = 200) => (text.length > max ? text.slice(0, max) : text).replace(/[\u0000-\u001f\u007f]/g, '');
const whole = (value: number) => (Number.isFinite(value) && value > 0 ? Math.min(Math.round(value), 2_147_483_647) : 0);

/** The row of a capture: bodies cut to the bound, anonymized (yielding), clipped, then sealed (or kept as JSON without encryption). */
export async function toRow(c: Capture, options: RowOptions, clock: Clock = { since: performance.now() }): Promise<RequestRecordTable> {
  const { anonymizer, keys } = options;
  let truncated = 0;
  const body = async (value: unknown, flag: number): Promise<string> => {
    const budget: Budget = { left: options.maxBodyBytes };
    const clipped = clipStrings(value, budget);
    if (budget.cut) truncated |= flag;
    // Masked and anonymized as a logged body is: a key a user pasted is not kept either.
    const text = JSON.stringify((await transformStrings(anonymizer.namedFields(clipped), (piece) => anonymizer.text(redactText(piece)), clock)) ?? null);
    const { kept, cut } = clipUtf8(text, options.maxBodyBytes);
    if (cut) truncated |= flag;
    return kept;
  };
  const requestText = await body(c.request, 1);
  const responseValue = c.response === undefined ? undefined : 'json' in c.response ? c.response.json : { text: c.response.pieces.join('') };
  const responseText = responseValue === undefined ? null : await body(responseValue, 2);
  // Error messages may quote the request (a bad field's value).
  const errorText = c.errorMessage === null ? null : clipUtf8(anonymizer.text(redactText(c.errorMessage.slice(0, 4096))).replace(CONTROL, ''), 4096).kept;
  const current = keys?.current();
  const protect = (field: 'request' | 'response' | 'error', text: string) => (current ? seal(current, c.id, field, text) : text);
  return {
    id: c.id,
    created_at: c.createdAt,
    request_id: clip(c.requestId),
    tenant: clip(c.tenant),
    key_id: clip(c.keyId),
    api: c.api,
    model: clip(c.model),
    provider: c.provider === null ? null : clip(c.provider),
    routed_model: c.routedModel === null ? null : clip(c.routedModel),
    status: whole(c.status),
    error_code: c.errorCode === null ? null : clip(c.errorCode),
    prompt_tokens: whole(c.promptTokens),
    completion_tokens: whole(c.completionTokens),
    cost_nano: c.costUsd === undefined || !Number.isFinite(c.costUsd) ? null : Math.max(0, Math.round(c.costUsd * 1e9)),
    latency_ms: whole(c.latencyMs),
    ttft_ms: c.ttftMs === null ? null : whole(c.ttftMs),
    cache: c.cache,
    stream: c.stream ? 1 : 0,
    // Always the pseudonym, anonymization on or off: this column is plain text.
    end_user: c.user === undefined ? null : anonymizer.pseudonym(c.user),
    encryption_key: current?.id ?? null,
    truncated,
    request_body: protect('request', requestText),
    response_body: responseText === null ? null : protect('response', responseText),
    error_message: errorText === null ? null : protect('error', errorText),
  };
}

/**
 * `text` cut to at most `max` UTF-8 bytes, on a character boundary. A cut body is no longer JSON:
 * the reader returns it as a string then (the record's `truncated` says which).
 */
export function clipUtf8(text: string, max: number): { kept: string; cut: boolean } {
  // Fast: at most 3 bytes per UTF-16 unit.
  if (text.length * 3 <= max) return { kept: text, cut: false };
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return { kept: text, cut: false };
  let end = max;
  // Back off continuation bytes (10xxxxxx) so no character is split.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return { kept: bytes.subarray(0, end).toString('utf8'), cut: true };
}
