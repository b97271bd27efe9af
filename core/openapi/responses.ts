// Error responses, all with OpenAI's error body. The refusals every keyed route can give (key, IP
// filter, rate limit and its store) are components; `refusal` builds the ones a route words itself.
import { headers, RATE_LIMIT_HEADERS, type HeaderName } from './headers.js';
import type { Reference, Response } from './types.js';

const errorBody = { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } };

/** An error response: the error body, x-request-id and the named headers. */
export function refusal(description: string, ...names: HeaderName[]): Response {
  return { description, headers: headers(...names), content: errorBody };
}

/** The same, on a keyed route after the rate limit counted the request (x-ratelimit-* too). */
export function keyedRefusal(description: string, ...names: HeaderName[]): Response {
  return refusal(description, ...RATE_LIMIT_HEADERS, ...names);
}

export const RESPONSES = {
  Unauthorized: refusal('`Invalid API key` (code invalid_api_key: missing, malformed or unknown) or `API key expired` (code api_key_expired).', 'www-authenticate'),
  IpForbidden: refusal('The IP filter refuses this client (code ip_not_allowed): MODELGATE_BLOCKED_IPS, or MODELGATE_ALLOWED_IPS with whitelisting on.'),
  RateLimited: keyedRefusal(
    '`Rate limit exceeded` (code rate_limit_exceeded): the key sent more requests (or tokens) than its own limits, else MODELGATE_RATE_LIMIT_RPM/_BURST/_RPH/_TPM, allow; `param` names the limit: requests_per_minute, requests_per_hour or tokens_per_minute. Retry-After says when there is room again.',
    'retry-after',
    'retry-after-ms',
  ),
  RateLimitStoreUnavailable: refusal(
    'The shared rate-limit store (Redis) does not answer and MODELGATE_RATE_LIMIT_REDIS_FAILURE is `refuse` (code store_unavailable).',
    'retry-after',
  ),
} as const satisfies Record<string, Response>;

const component = (name: keyof typeof RESPONSES): Reference => ({ $ref: `#/components/responses/${name}` });

/** What any keyed route may answer besides its own: 401, 403 (IP filter), 429, 503 (rate-limit store). */
export function keyedErrors(own: Record<string, Response> = {}): Record<string, Response | Reference> {
  return { '401': component('Unauthorized'), '403': component('IpForbidden'), '429': component('RateLimited'), '503': component('RateLimitStoreUnavailable'), ...own };
}
