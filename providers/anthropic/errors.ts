// Anthropic error bodies `{"type":"error","error":{"type","message","details"?}}`, from an HTTP
// status or from an `error` event inside a stream, → UpstreamError through the common status
// policy. Problems of the gateway's own Anthropic account (bad key, billing, monthly spend cap)
// are 502 and not retried: the client's request is fine and retrying cannot help.
import type { IncomingHttpHeaders } from 'node:http';
import { UpstreamError, credentialsRejected, parseRetryAfter, statusPolicy, type FailureReason } from '../../core/upstream-error.js';
import { isObject } from '../shared/json-object.js';

interface NativeError {
  type?: unknown;
  message?: unknown;
  details?: { error_code?: unknown } | null;
}

/** The HTTP status Anthropic documents for each error type, for errors that arrive inside a 200 stream. */
const STATUS_OF_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

export function anthropicError(status: number, headers: IncomingHttpHeaders, text: string): UpstreamError {
  let error: NativeError = {};
  try {
    const body: unknown = JSON.parse(text);
    if (isObject(body) && isObject(body.error)) error = body.error;
  } catch {
    // not JSON (e.g. a proxy's HTML page): the status says enough
  }
  return normalize(status, error, 'http_status', status, parseRetryAfter(headers));
}

export function anthropicStreamError(error: unknown): UpstreamError {
  const native: NativeError = isObject(error) ? error : {};
  const status = (typeof native.type === 'string' && STATUS_OF_TYPE[native.type]) || 500;
  return normalize(status, native, 'stream_error', 200, undefined);
}

function normalize(status: number, error: NativeError, reason: FailureReason, upstreamStatus: number, retryAfterMs: number | undefined): UpstreamError {
  const type = typeof error.type === 'string' ? error.type : undefined;
  const message = typeof error.message === 'string' ? error.message : `The anthropic provider answered HTTP ${status}`;
  const common = { provider: 'anthropic', reason, upstreamStatus, retryAfterMs };
  if (status === 401 || status === 403) {
    const detail = typeof error.message === 'string' ? error.message : undefined;
    return credentialsRejected('anthropic', { status, detail, settings: 'ANTHROPIC_API_KEY', inStream: reason === 'stream_error', retryAfterMs });
  }
  const spendCap = status === 429 && error.details?.error_code === 'enforced_spend_limit_reached';
  if (status === 402 || spendCap) {
    return new UpstreamError({
      ...common,
      status: 502,
      retryable: false,
      message: `The anthropic provider refused the gateway's account (${spendCap ? 'monthly spend limit reached' : 'billing'}): ${message}`,
      type: 'server_error',
      code: spendCap ? 'enforced_spend_limit_reached' : 'provider_billing_error',
    });
  }
  return new UpstreamError({ ...common, ...statusPolicy(status), message, type });
}
