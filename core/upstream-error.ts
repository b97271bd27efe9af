// A failed upstream attempt, normalized: whether trying again (same target or another) can help,
// how long the provider asked us to wait, and what the client should see if it is the last word.
import { GatewayError, type ErrorBody } from './errors.js';
import { redactText } from './redact.js';

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

  // Everything here may quote the provider, and the provider may quote our credentials: masked
  // once, here, so no reader — client body, stream error event, status endpoint, log — can miss it.
  constructor(init: UpstreamErrorInit) {
    super(redactText(init.message));
    this.name = 'UpstreamError';
    this.provider = init.provider;
    this.reason = init.reason;
    this.upstreamStatus = init.upstreamStatus;
    this.retryable = init.retryable;
    this.retryAfterMs = init.retryAfterMs;
    this.status = init.status;
    this.type = init.type ? redactText(init.type) : init.status >= 500 ? 'server_error' : 'invalid_request_error';
    this.code = init.code ? redactText(init.code) : null;
    this.param = init.param ? redactText(init.param) : null;
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

// The failures every provider can have below its own protocol, and those any protocol can report
// (a failure inside a 200 answer, the gateway's own key refused), built in one place so every
// adapter words and classifies them alike.

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

/** How a provider said, inside a 200 answer, that it failed. */
export interface ReportedFailure {
  /** The provider's own words, when it gave any. */
  detail?: string;
  /** The finish reason that means "failed" (Mistral `error`, Cohere `ERROR`), when that is how it said so. */
  finishReason?: string;
  type?: string;
  code?: string | null;
  /** Whether another try may succeed: yes unless the provider's report says otherwise. */
  retryable?: boolean;
  /** The provider gave up for lack of time (504). */
  timedOut?: boolean;
  /** false when a whole non-stream answer said it failed. */
  inStream?: boolean;
}

/**
 * The provider answered 200 and then said it failed: an error event inside the stream, or a finish
 * reason that means "error". Not an answer, and by default retryable: another attempt, or another
 * provider, may give one.
 */
export function reportedFailure(provider: string, failure: ReportedFailure = {}): UpstreamError {
  const inStream = failure.inStream ?? true;
  const what = failure.finishReason ? `stopped generating (finish_reason ${failure.finishReason})` : `reported an error${inStream ? ' in the stream' : ''}`;
  return new UpstreamError({
    provider,
    reason: inStream ? 'stream_error' : failure.timedOut ? 'timeout' : 'bad_response',
    upstreamStatus: 200,
    retryable: failure.retryable ?? true,
    status: failure.timedOut ? 504 : 502,
    message: `The ${provider} provider ${what}${failure.detail ? `: ${failure.detail}` : ''}`,
    type: failure.type,
    code: failure.code ?? (failure.timedOut ? 'upstream_timeout' : failure.finishReason ? 'upstream_generation_error' : 'upstream_stream_error'),
  });
}

/** How a provider refused the gateway's own credentials. */
export interface RejectedCredentials {
  /** The status that said so; for an error event inside a stream, the status its type stands for. */
  status: number;
  /** The provider's own name for the refusal, after the status (Gemini's `INVALID_ARGUMENT API_KEY_INVALID`). */
  label?: string;
  /** The provider's message, only where it cannot quote the key (OpenAI's quotes part of it). */
  detail?: string;
  /** The settings that hold the credentials, for the operator to check. */
  settings: string;
  inStream?: boolean;
  retryAfterMs?: number;
}

/**
 * A provider refused the gateway's own key: the operator's problem, not the client's. 502 and no
 * retry (statusPolicy's rule for 401/403); failover may still try another provider.
 */
export function credentialsRejected(provider: string, rejected: RejectedCredentials): UpstreamError {
  const said = [`HTTP ${rejected.status}`, rejected.label].filter(Boolean).join(' ') + (rejected.detail ? `: ${rejected.detail}` : '');
  return new UpstreamError({
    provider,
    reason: rejected.inStream ? 'stream_error' : 'http_status',
    upstreamStatus: rejected.inStream ? 200 : rejected.status,
    retryAfterMs: rejected.retryAfterMs,
    ...statusPolicy(401),
    message: `The ${provider} provider rejected the gateway's credentials (${said}); check ${rejected.settings}`,
    type: 'server_error',
    code: 'provider_auth_error',
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

/**
 * The provider began answering (status and headers arrived) and the connection broke before the
 * answer ended. Retryable like any connection failure, but not "could not reach": it was reached,
 * and an operator chasing DNS or firewalls would look in the wrong place.
 */
export function connectionLost(provider: string, error: Error): UpstreamError {
  return connectionFailure(provider, error, `The ${provider} provider closed the connection mid-answer`);
}

/** Refused, reset, unresolvable: no HTTP answer at all. */
export function unreachable(provider: string, error: Error): UpstreamError {
  return connectionFailure(provider, error, `Could not reach the ${provider} provider`);
}

/** A connection failure, retryable (another attempt may get through), with the socket's error code. */
function connectionFailure(provider: string, error: Error, what: string): UpstreamError {
  const code = (error as NodeJS.ErrnoException).code;
  return new UpstreamError({
    provider,
    reason: 'connection',
    upstreamStatus: 0,
    retryable: true,
    status: 503,
    message: `${what}${code ? ` (${code})` : ''}`,
    type: 'service_unavailable_error',
    code: 'upstream_connection_error',
  });
}
