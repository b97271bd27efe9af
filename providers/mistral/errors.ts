// Mistral's errors: the HTTP error shapes and the error object inside a stream.
import type { IncomingHttpHeaders } from 'node:http';
import { UpstreamError, parseRetryAfter, reportedFailure, statusPolicy } from '../../core/upstream-error.js';
import { openAIError } from '../openai-compatible/errors.js';
import { isObject } from '../shared/json-object.js';

/**
 * Mistral answers errors in several shapes (`{"detail": "…"}`, legacy `{"message": …}`,
 * `{"object": "error", …}`), which the OpenAI-compatible reader already handles. Two need more:
 * a 422 lists validation problems under `detail`, and "Service tier capacity exceeded" is an
 * overload whatever status carries it (seen with 503 in litellm#25078, and with 400), so it is
 * retried or failed over like a 503 rather than blamed on the request.
 */
export function mistralError(status: number, headers: IncomingHttpHeaders, text: string): UpstreamError {
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed)) body = parsed;
  } catch {
    // not JSON: the status alone says what happened
  }
  const base = { provider: 'mistral', reason: 'http_status' as const, upstreamStatus: status, retryAfterMs: parseRetryAfter(headers) };
  if (Array.isArray(body.detail)) {
    const policy = statusPolicy(status);
    return new UpstreamError({ ...base, ...policy, message: `The mistral provider rejected the request: ${validationText(body.detail)}`, code: 'invalid_request' });
  }
  if (status !== 401 && status !== 403 && status !== 429 && typeof body.message === 'string' && /capacity exceeded/i.test(body.message)) {
    return new UpstreamError({ ...base, ...statusPolicy(503), message: body.message, type: 'service_unavailable_error', code: 'provider_overloaded' });
  }
  return openAIError('mistral', status, headers, text, 'MISTRAL_API_KEY');
}

/** `[{loc: ["body", "messages"], msg: "Field required"}]` → `messages: Field required`. */
function validationText(detail: unknown[]): string {
  return detail
    .map((item) => {
      if (!isObject(item)) return String(item);
      const loc = Array.isArray(item.loc) ? item.loc.filter((part) => part !== 'body').join('.') : '';
      const msg = typeof item.msg === 'string' ? item.msg : 'invalid';
      return loc ? `${loc}: ${msg}` : msg;
    })
    .join('; ');
}

/** An error object inside the stream (`{"object":"error",…}`, `{"error":…}` or `{"detail":…}`). */
export function mistralStreamError(payload: Record<string, unknown>): UpstreamError {
  const inner = isObject(payload.error) ? payload.error : payload;
  const detail = typeof inner.message === 'string' ? inner.message : typeof inner.detail === 'string' ? inner.detail : undefined;
  return reportedFailure('mistral', { detail, type: typeof inner.type === 'string' ? inner.type : undefined, code: typeof inner.code === 'string' ? inner.code : undefined });
}
