// The one error type of the gateway. Every refusal, from any plugin, provider or core step, is a
// GatewayError of a kind from this table; only the server renders it, as OpenAI's error body:
// {"error":{"message","type","param","code"}}. Where the spec gives a text, `message` is that text.

interface ErrorKind {
  status: number;
  type: string;
  code: string | null;
  message: string;
}

export const ERROR_KINDS = {
  bad_request: { status: 400, type: 'invalid_request_error', code: 'invalid_request', message: 'Invalid request' },
  invalid_json: { status: 400, type: 'invalid_request_error', code: 'invalid_json', message: 'Request body is not valid JSON' },
  json_too_deep: { status: 400, type: 'invalid_request_error', code: 'json_too_deep', message: 'Request body nests too deeply' },
  invalid_api_key: { status: 401, type: 'invalid_request_error', code: 'invalid_api_key', message: 'Invalid API key' },
  api_key_expired: { status: 401, type: 'invalid_request_error', code: 'api_key_expired', message: 'API key expired' },
  session_required: { status: 401, type: 'invalid_request_error', code: 'session_required', message: 'Not signed in: no dashboard session, or it ended' },
  ip_forbidden: { status: 403, type: 'permission_error', code: 'ip_not_allowed', message: 'Access from this IP address is not allowed' },
  model_unpriced: { status: 403, type: 'permission_error', code: 'model_unpriced', message: 'The gateway has no price for this model' },
  model_not_allowed: { status: 403, type: 'permission_error', code: 'model_not_allowed', message: 'This API key may not use this model' },
  csrf_failed: { status: 403, type: 'permission_error', code: 'csrf_failed', message: "A change made with a dashboard session needs the session's CSRF token in x-csrf-token" },
  admin_required: { status: 403, type: 'permission_error', code: 'admin_required', message: 'This endpoint needs an admin key' },
  model_not_found: { status: 404, type: 'invalid_request_error', code: 'model_not_found', message: 'Model not found' },
  model_unavailable: { status: 404, type: 'invalid_request_error', code: 'model_unavailable', message: 'Model unavailable' },
  provider_not_found: { status: 404, type: 'invalid_request_error', code: 'provider_not_found', message: 'Provider not found' },
  key_not_found: { status: 404, type: 'invalid_request_error', code: 'key_not_found', message: 'No API key has this id' },
  webhook_not_found: { status: 404, type: 'invalid_request_error', code: 'webhook_not_found', message: 'No webhook endpoint has this id' },
  delivery_not_found: { status: 404, type: 'invalid_request_error', code: 'delivery_not_found', message: 'This webhook endpoint has no delivery with this id' },
  experiment_not_found: { status: 404, type: 'invalid_request_error', code: 'experiment_not_found', message: 'No experiment has this id' },
  request_not_found: { status: 404, type: 'invalid_request_error', code: 'request_not_found', message: 'No request of this key with this id is in an experiment' },
  record_not_found: { status: 404, type: 'invalid_request_error', code: 'record_not_found', message: 'No request record has this id' },
  response_not_found: { status: 404, type: 'invalid_request_error', code: 'response_not_found', message: 'Response not found' },
  route_not_found: { status: 404, type: 'invalid_request_error', code: 'unknown_url', message: 'Unknown endpoint' },
  method_not_allowed: { status: 405, type: 'invalid_request_error', code: 'method_not_allowed', message: 'Method not allowed' },
  request_timeout: { status: 408, type: 'invalid_request_error', code: 'request_timeout', message: 'The request did not arrive in time' },
  conflict: { status: 409, type: 'invalid_request_error', code: 'conflict', message: 'The request conflicts with the state of the resource' },
  payload_too_large: { status: 413, type: 'invalid_request_error', code: 'request_too_large', message: 'Request body too large' },
  expectation_failed: { status: 417, type: 'invalid_request_error', code: 'expectation_failed', message: 'Only Expect: 100-continue is supported' },
  rate_limit_exceeded: { status: 429, type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit exceeded' },
  provider_rate_limited: { status: 429, type: 'requests', code: 'provider_rate_limited', message: 'Rate limit exceeded' },
  cost_limit_exceeded: { status: 429, type: 'insufficient_quota', code: 'insufficient_quota', message: 'Cost limit exceeded' },
  headers_too_large: { status: 431, type: 'invalid_request_error', code: 'headers_too_large', message: 'Request headers too large' },
  internal: { status: 500, type: 'server_error', code: 'internal_error', message: 'Internal error' },
  bad_gateway: { status: 502, type: 'server_error', code: 'bad_gateway', message: 'The provider answered with something the gateway could not use' },
  provider_unavailable: { status: 503, type: 'service_unavailable_error', code: 'provider_unavailable', message: 'Provider unavailable' },
  store_unavailable: { status: 503, type: 'service_unavailable_error', code: 'store_unavailable', message: 'The shared store is unavailable' },
  too_many_connections: { status: 503, type: 'service_unavailable_error', code: 'too_many_connections', message: 'The gateway has too many open connections' },
  shutting_down: { status: 503, type: 'service_unavailable_error', code: 'shutting_down', message: 'The gateway is shutting down' },
} as const satisfies Record<string, ErrorKind>;

export type ErrorKindName = keyof typeof ERROR_KINDS;

export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

interface Details {
  /** Replaces the kind's message; only for kinds whose message the spec does not fix. */
  message?: string;
  param?: string | null;
  code?: string | null;
  type?: string;
  /** Overrides the kind's status, e.g. an upstream's own 4xx passed back to the client. */
  status?: number;
  headers?: Record<string, string>;
  cause?: unknown;
}

const BRAND = Symbol.for('modelgate.GatewayError');

export class GatewayError extends Error {
  readonly [BRAND] = true;
  readonly kind: ErrorKindName;
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly code: string | null;
  readonly headers: Record<string, string>;

  constructor(kind: ErrorKindName, details: Details = {}) {
    const base: ErrorKind = ERROR_KINDS[kind];
    super(details.message ?? base.message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'GatewayError';
    this.kind = kind;
    this.status = details.status ?? base.status;
    this.type = details.type ?? base.type;
    this.param = details.param ?? null;
    this.code = details.code === undefined ? base.code : details.code;
    this.headers = details.headers ?? {};
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export function isGatewayError(value: unknown): value is GatewayError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

/** Anything thrown that is not a GatewayError is an internal error; its text is logged, not shown. */
export function toGatewayError(value: unknown): GatewayError {
  return isGatewayError(value) ? value : new GatewayError('internal', { cause: value });
}
