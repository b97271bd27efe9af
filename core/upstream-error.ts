// A failed upstream attempt, normalized: whether trying again (same target or another) can help,
// how long the provider asked us to wait, and what the client should see if it is the last word.
import { GatewayError, type ErrorBody } from './errors.js';

const BRAND = Symbol.for('modelgate.UpstreamError');

export type FailureReason =
  | 'http_status' // the provider answered with an error status
  | 'bad_response' // 200 with a body its protocol does not allow
  | 'connection' // refused, reset, DNS
  | 'timeout'
  | 'stream_error' // an error event inside a stream
  | 'stream_truncated'; // the stream ended before the provider said it finished

export interface UpstreamErrorInit {
  provider: string;
  reason: FailureReason;
  /** The provider's HTTP status (0 when none arrived). */
  upstreamStatus: number;
  /** Whether retrying or failing over may succeed (429, 529, 5xx, timeouts, connection errors). */
  retryable: boolean;
  retryAfterMs?: number;
  /** Status and body the client gets when this is final (provider 4xx kept; auth problems are 502). */
  status: number;
  message: string;
  type?: string;
  code?: string | null;
  param?: string | null;
}

export class UpstreamError extends Error {
  readonly [BRAND] = true;
  readonly provider: string;
  readonly reason: FailureReason;
  readonly upstreamStatus: number;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  readonly status: number;
  readonly type: string;
  readonly code: string | null;
  readonly param: string | null;

  constructor(init: UpstreamErrorInit) {
    super(init.message);
    this.name = 'UpstreamError';
    this.provider = init.provider;
    this.reason = init.reason;
    this.upstreamStatus = init.upstreamStatus;
    this.retryable = init.retryable;
    this.retryAfterMs = init.retryAfterMs;
    this.status = init.status;
    this.type = init.type ?? (init.status >= 500 ? 'server_error' : 'invalid_request_error');
    this.code = init.code ?? null;
    this.param = init.param ?? null;
  }

  /**
   * The request itself was refused (a provider 4xx other than auth, billing, timeout or rate
   * limit): no retry, no failover — another provider would refuse it too.
   */
  get causedByRequest(): boolean {
    return !this.retryable && this.status >= 400 && this.status < 500;
  }

  /** What the client sees when no other attempt is made. */
  toGatewayError(): GatewayError {
    const kind = this.status >= 500 ? 'bad_gateway' : 'bad_request';
    return new GatewayError(kind, {
      status: this.status,
      message: this.message,
      type: this.type,
      code: this.code,
      param: this.param,
      cause: this,
    });
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export function isUpstreamError(value: unknown): value is UpstreamError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

/**
 * The common policy for an upstream error status, shared by every adapter: a provider's 401/403
 * means the gateway's credentials are wrong and 402 its account is out of credit (502 — the
 * client's key is fine; another provider may answer); 408, 409, 429, 529 and 5xx are worth another
 * try; any other 4xx was caused by the request and is passed back as is.
 */
export function statusPolicy(upstreamStatus: number): { status: number; retryable: boolean } {
  if (upstreamStatus === 401 || upstreamStatus === 402 || upstreamStatus === 403) return { status: 502, retryable: false };
  if (upstreamStatus === 408 || upstreamStatus === 409 || upstreamStatus === 429 || upstreamStatus >= 500) {
    return { status: upstreamStatus === 429 ? 429 : upstreamStatus === 408 ? 504 : 503, retryable: true };
  }
  if (upstreamStatus >= 400) return { status: upstreamStatus, retryable: false };
  return { status: 502, retryable: true };
}

/** `Retry-After` (seconds or HTTP date) or `retry-after-ms`, in ms; undefined when absent or unparsable. */
export function parseRetryAfter(headers: Record<string, string | string[] | undefined>, now = Date.now()): number | undefined {
  const ms = headers['retry-after-ms'];
  if (typeof ms === 'string' && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = headers['retry-after'];
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

// The failures every provider can have below its own protocol, built in one place.

/** A 200 whose body its protocol does not allow: retryable (another try, or provider, may do better). */
export function badResponse(provider: string, why: string): UpstreamError {
  return new UpstreamError({
    provider,
    reason: 'bad_response',
    upstreamStatus: 200,
    retryable: true,
    status: 502,
    message: `The ${provider} provider returned an invalid response: ${why}`,
    code: 'bad_upstream_response',
  });
}

/** The stream ended before the provider said the answer was complete. */
export function truncatedStream(provider: string): UpstreamError {
  return new UpstreamError({
    provider,
    reason: 'stream_truncated',
    upstreamStatus: 200,
    retryable: true,
    status: 502,
    message: `The ${provider} provider ended the stream before the answer was complete`,
    code: 'stream_truncated',
  });
}

export function timedOut(provider: string, ms?: number): UpstreamError {
  return new UpstreamError({
    provider,
    reason: 'timeout',
    upstreamStatus: 0,
    retryable: true,
    status: 504,
    message: `The ${provider} provider did not answer ${ms ? `within ${ms} ms` : 'in time'}`,
    type: 'timeout_error',
    code: 'upstream_timeout',
  });
}

/** Refused, reset, unresolvable: no HTTP answer at all. */
export function unreachable(provider: string, error: Error): UpstreamError {
  const code = (error as NodeJS.ErrnoException).code;
  return new UpstreamError({
    provider,
    reason: 'connection',
    upstreamStatus: 0,
    retryable: true,
    status: 503,
    message: `Could not reach the ${provider} provider${code ? ` (${code})` : ''}`,
    type: 'service_unavailable_error',
    code: 'upstream_connection_error',
  });
}
