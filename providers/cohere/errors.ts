// Cohere's errors: the HTTP error body and the error event inside a stream. Cohere's 498 (invalid
// token) counts as bad credentials, like 401: the gateway's key is at fault, never the client's.
import type { IncomingHttpHeaders } from 'node:http';
import { UpstreamError, credentialsRejected, parseRetryAfter, reportedFailure, statusPolicy } from '../../core/upstream-error.js';
import { isObject } from '../shared/json-object.js';

/** Cohere's error body is `{"message": …}` (sometimes with an `id`), through the common status policy. */
export function cohereError(status: number, headers: IncomingHttpHeaders, text: string): UpstreamError {
  let message: string | undefined;
  try {
    const body: unknown = JSON.parse(text);
    if (isObject(body) && typeof body.message === 'string') message = body.message;
  } catch {
    // not JSON: the status alone says what happened
  }
  const retryAfterMs = parseRetryAfter(headers);
  if (status === 401 || status === 403 || status === 498) return credentialsRejected('cohere', { status, detail: message, settings: 'COHERE_API_KEY', retryAfterMs });
  const policy = statusPolicy(status);
  return new UpstreamError({
    provider: 'cohere',
    reason: 'http_status',
    upstreamStatus: status,
    retryable: policy.retryable,
    retryAfterMs,
    status: policy.status,
    message: message ?? `The cohere provider answered HTTP ${status}`,
    code: status === 429 ? 'rate_limit_exceeded' : null,
  });
}

/** An error event inside the stream: worth another attempt, as its status would be. */
export function cohereStreamError(message: unknown): UpstreamError {
  return reportedFailure('cohere', { detail: typeof message === 'string' ? message : undefined });
}
