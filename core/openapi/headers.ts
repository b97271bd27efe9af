// The response headers the gateway writes, as OpenAPI header components: x-request-id on every
// response (core/respond.ts), what happened to a chat request (x-modelgate-*, core/respond.ts),
// OpenAI's x-ratelimit-* on keyed responses (plugins/rate/headers.ts), and the waits and refusals
// (Retry-After, retry-after-ms, x-should-retry, WWW-Authenticate). Numbers travel as text.
import type { Header, Reference } from './types.js';

const count = { type: 'integer', minimum: 0 };
// plugins/rate/headers.ts formatDuration: "20ms", "1.5s", "6m0s", "1h2m3s".
const duration = { type: 'string', pattern: '^(\\d+ms|(\\d+h)?(\\d+m)?\\d+(\\.\\d+)?s)$' };
const whenRateLimited = 'On every response to a keyed route once the rate limit has counted the request, when rate limiting is on (MODELGATE_RATE_LIMITING_ENABLED, the default).';

export const HEADERS = {
  'x-request-id': {
    description: "The request's id, in the gateway's logs too: the client's own x-request-id when it sent a valid one (1 to 128 of A-Z a-z 0-9 _ . : -), else a new UUID.",
    required: true,
    schema: { type: 'string', pattern: '^[\\w.:-]{1,128}$' },
  },
  'x-ratelimit-limit-requests': { description: `Requests the key may send in the current window (the minute with its burst allowance, or the hour, whichever has fewer left). ${whenRateLimited}`, schema: count },
  'x-ratelimit-remaining-requests': { description: `Requests left in that window. ${whenRateLimited}`, schema: count },
  'x-ratelimit-reset-requests': { description: `Until that window's requests come back, e.g. "20ms", "1.5s", "6m0s". ${whenRateLimited}`, schema: duration },
  'x-ratelimit-limit-tokens': { description: `Tokens per minute the key may use (MODELGATE_RATE_LIMIT_TPM). ${whenRateLimited}`, schema: count },
  'x-ratelimit-remaining-tokens': { description: `Tokens left this minute. ${whenRateLimited}`, schema: count },
  'x-ratelimit-reset-tokens': { description: `Until this minute's tokens come back. ${whenRateLimited}`, schema: duration },
  'retry-after': { description: 'Seconds to wait before trying again, when the gateway knows a wait that helps.', schema: { type: 'integer', minimum: 1 } },
  'retry-after-ms': { description: "The same wait in milliseconds (OpenAI's SDKs prefer it): sent with a rate-limit refusal.", schema: { type: 'integer', minimum: 1 } },
  'x-should-retry': {
    description: "`false` when retrying cannot help: a request larger than a whole minute's tokens, a budget spent or paused until its period resets, a request over the per-request cost limit. OpenAI's SDKs then do not retry.",
    schema: { type: 'string', enum: ['false'] },
  },
  'www-authenticate': { description: 'The bearer challenge: which realm wants which key.', required: true, schema: { type: 'string', pattern: '^Bearer realm="modelgate(-metrics)?"' } },
  'x-modelgate-provider': { description: 'The provider that answered (or, on a cache hit, that answered first).', schema: { type: 'string' } },
  'x-modelgate-model': {
    description: 'The catalog id of the model that answered. Characters outside printable ASCII are percent-encoded as UTF-8.',
    schema: { type: 'string' },
  },
  'x-modelgate-strategy': { description: 'The routing strategy that ranked the candidates; on a cache hit, the strategy the request asked for (its override, else the setting), under which the stored answer was routed.', schema: { type: 'string' } },
  'x-modelgate-cache': { description: 'HIT (answered from the cache), MISS (not found, stored if whole) or BYPASS (the request turned the cache off); absent when the cache is off.', schema: { type: 'string', enum: ['HIT', 'MISS', 'BYPASS'] } },
  'x-modelgate-attempts': { description: 'Upstream calls made, retries and fallbacks included: 1 for a first-try success, 0 for a cache hit.', required: true, schema: count },
  'x-modelgate-cost': {
    description: "USD the request cost: its usage times the catalog price, 0 on a cache hit. Absent when the model has no price. A stream a provider answers sends it as an HTTP trailer (see Trailer), since the usage is known only at its end.",
    schema: { type: 'number', minimum: 0 },
  },
  'x-modelgate-experiment': {
    description: '`<experiment>/<arm>`: the request entered this A/B experiment and was sent to this arm (docs/experiments.md). Absent otherwise. On a refusal too, when the request was refused after it was assigned.',
    schema: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}/[A-Za-z0-9][A-Za-z0-9._-]{0,63}$' },
  },
  'cache-control': { description: '`no-store`: the answer depends on the key that asked.', required: true, schema: { type: 'string', enum: ['no-store'] } },
  'set-cookie': {
    description: 'The dashboard session cookie, `modelgate_session=<token>; Path=/; Max-Age=<seconds>; HttpOnly; SameSite=Strict` (and `Secure` over TLS); emptied with Max-Age=0 at sign-out.',
    required: true,
    schema: { type: 'string', pattern: '^modelgate_session=[A-Za-z0-9_-]*; Path=/; Max-Age=\\d+; HttpOnly; SameSite=Strict(; Secure)?$' },
  },
  'content-security-policy': {
    description: "The dashboard's policy: scripts, styles, images and connections from the gateway only, nothing inline, no framing (frame-ancestors 'none').",
    required: true,
    schema: { type: 'string' },
  },
  etag: { description: "The file's content hash: send it back in If-None-Match for a 304.", required: true, schema: { type: 'string' } },
  trailer: { description: 'Announces the x-modelgate-cost trailer of a stream a provider answers.', schema: { type: 'string', enum: ['x-modelgate-cost'] } },
} as const satisfies Record<string, Header>;

export type HeaderName = keyof typeof HEADERS;

export const RATE_LIMIT_HEADERS = [
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-tokens',
] as const satisfies readonly HeaderName[];

/** A response's headers: x-request-id, then the named ones, each a reference to its component. */
export function headers(...names: HeaderName[]): Record<string, Reference> {
  return Object.fromEntries(['x-request-id', ...names].map((name) => [name, { $ref: `#/components/headers/${name}` }]));
}
