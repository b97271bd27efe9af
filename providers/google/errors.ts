// Google RPC error bodies `{"error":{"code","message","status","details"}}`, from an HTTP status or
// inside a stream, → UpstreamError through the common status policy. Gemini reports a bad key as
// 400 INVALID_ARGUMENT with reason API_KEY_INVALID and an account without access as
// FAILED_PRECONDITION: both are the gateway's problem, 502 and not retried. Waits come from
// `Retry-After` or else the body's RetryInfo.retryDelay.
import type { IncomingHttpHeaders } from 'node:http';
import { UpstreamError, credentialsRejected, parseRetryAfter, statusPolicy, type FailureReason } from '../../core/upstream-error.js';
import { isObject } from '../shared/json-object.js';

interface NativeError {
  code?: unknown;
  message?: unknown;
  status?: unknown;
  details?: unknown;
}

interface Detail {
  '@type'?: unknown;
  reason?: unknown;
  retryDelay?: unknown;
}

export function googleError(status: number, headers: IncomingHttpHeaders, text: string): UpstreamError {
  let error: NativeError = {};
  try {
    let body = JSON.parse(text) as unknown;
    if (Array.isArray(body)) body = body[0]; // the non-SSE stream endpoint wraps responses in an array
    if (isObject(body) && isObject(body.error)) error = body.error;
  } catch {
    // not JSON: the status says enough
  }
  return normalize(status, error, 'http_status', status, parseRetryAfter(headers) ?? retryDelayMs(error));
}

export function googleStreamError(error: unknown): UpstreamError {
  const native: NativeError = isObject(error) ? error : {};
  const status = typeof native.code === 'number' && native.code >= 400 ? native.code : 500;
  return normalize(status, native, 'stream_error', 200, retryDelayMs(native));
}

function normalize(status: number, error: NativeError, reason: FailureReason, upstreamStatus: number, retryAfterMs: number | undefined): UpstreamError {
  const details = Array.isArray(error.details) ? (error.details as Detail[]) : [];
  const rpcStatus = typeof error.status === 'string' ? error.status : undefined;
  const errorReason = details.find((detail) => typeof detail?.reason === 'string')?.reason as string | undefined;
  const message = typeof error.message === 'string' ? error.message : `The google provider answered HTTP ${status}`;
  const common = { provider: 'google', reason, upstreamStatus, retryAfterMs };
  if (status === 401 || status === 403 || errorReason === 'API_KEY_INVALID' || rpcStatus === 'UNAUTHENTICATED' || rpcStatus === 'PERMISSION_DENIED') {
    const rpc = [rpcStatus, errorReason].filter(Boolean).join(' ');
    const detail = typeof error.message === 'string' ? error.message : undefined;
    return credentialsRejected('google', { status, label: rpc, detail, settings: 'GOOGLE_API_KEY and GOOGLE_PROJECT_ID', inStream: reason === 'stream_error', retryAfterMs });
  }
  const label = [status, rpcStatus, errorReason].filter(Boolean).join(' ');
  if (rpcStatus === 'FAILED_PRECONDITION') {
    return new UpstreamError({ ...common, status: 502, retryable: false, message: `The google provider refused the gateway's account (${label}): ${message}`, type: 'server_error', code: 'provider_account_error' });
  }
  // Google's RPC status is the machine-readable part; its 429 is a rate limit, not a bad request.
  return new UpstreamError({ ...common, ...statusPolicy(status), message, type: status === 429 ? 'rate_limit_error' : undefined, code: rpcStatus ?? null });
}

/** `google.rpc.RetryInfo.retryDelay`, a protobuf Duration in JSON ("34.4s"), in ms. */
function retryDelayMs(error: NativeError): number | undefined {
  if (!Array.isArray(error.details)) return undefined;
  for (const detail of error.details as Detail[]) {
    if (typeof detail?.['@type'] !== 'string' || !detail['@type'].endsWith('google.rpc.RetryInfo')) continue;
    const match = typeof detail.retryDelay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(detail.retryDelay) : null;
    if (match) return Math.round(Number(match[1]) * 1000);
  }
  return undefined;
}
