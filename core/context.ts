// The request context: everything the pipeline learns about one request, in one object that every
// plugin reads and adds to. Created by the server, discarded when the response has ended.
import type { IncomingMessage, ServerResponse, IncomingHttpHeaders } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Cancellation } from './cancellation.js';
import type { ChatChunk, ChatCompletion, ChatRequest, Usage } from './chat-types.js';
import type { CatalogModel } from './catalog.js';
import type { GatewayError } from './errors.js';
import type { Provider } from './provider.js';
import type { Overrides } from './overrides.js';
import type { FailureReason } from './upstream-error.js';
import type { EmbeddingsRequest, EmbeddingsResponse } from './embeddings-types.js';
import type { InputItem, ResponseObject, ResponsesRequest } from './responses/types.js';
import type { ResponseFrame } from './responses/output.js';

/** The caller, as established by the auth plugin. */
export interface Principal {
  /** Stable id of the key (not the secret), used for limits, usage and cache isolation. */
  keyId: string;
  /** Whose data this is: requests of one tenant never see another tenant's cache or usage. */
  tenant: string;
  admin: boolean;
  /** The key's own limits; a limit it does not set falls back to the gateway-wide setting. */
  limits?: KeyLimits;
  /** When set, the only models (`model` or `provider/model`) or providers (`provider/*`) the key may use. */
  allowedModels?: readonly string[];
}

/** Per-key limits, named as the spec names them (the admin API's `limits` object). */
export interface KeyLimits {
  requests_per_minute?: number;
  requests_per_hour?: number;
  tokens_per_minute?: number;
  max_cost_per_request?: number;
  daily_cost_limit?: number;
  weekly_cost_limit?: number;
  monthly_cost_limit?: number;
}

/** One place a request can be sent: a catalog model on a provider. */
export interface Target {
  provider: Provider;
  model: CatalogModel;
}

/** A POST /v1/responses request: what it asked, in its own terms, and how its answer is kept. */
export interface ResponsesState {
  /** The client's request, without the gateway's own `modelgate` field. */
  request: ResponsesRequest;
  /** The stored turns of previous_response_id, as input items (empty without one). */
  history: InputItem[];
  /** The response's id and start; its model is filled in when the answer is written. */
  frame: ResponseFrame;
  /** Called once with the finished Response, before its last byte is written: stores it when `store` (resolves once written). */
  settle(response: ResponseObject): Promise<void>;
}

/** A POST /v1/embeddings request. */
export interface EmbeddingsState {
  request: EmbeddingsRequest;
  /** Vectors asked for. */
  inputs: number;
  encoding: 'float' | 'base64';
}

export interface ChatState {
  /**
   * Which API the client speaks: chat completions; the Responses API (translated to the chat
   * request `body`, answered as a Response); or embeddings (`body` carries the model and the input).
   */
  api: 'chat' | 'responses' | 'embeddings';
  responses?: ResponsesState;
  embeddings?: EmbeddingsState;
  /** The validated body, without the gateway's own `modelgate` field. */
  body: ChatRequest;
  /** Per-request overrides by plugin (`routing`, `failover`, `retry`, …), from the body and headers. */
  overrides: Overrides;
  stream: boolean;
  /** The client asked for the usage chunk (stream_options.include_usage). */
  includeUsage: boolean;
  /** Upper bound on output tokens the client allowed, if it set one. */
  maxOutputTokens: number | undefined;
  /** Output tokens to assume for estimates: the client's bound, else MODELGATE_DEFAULT_OUTPUT_TOKENS. */
  expectedOutputTokens: number;
  /** Estimated prompt tokens (core/tokens.ts), computed on first use. */
  readonly promptTokens: number;
  /** A cheap bound that promptTokens never exceeds (body bytes, per-message overhead, images). */
  readonly promptTokensUpperBound: number;
  /** Bytes of the body as received (a Responses request's: with the history it continues); bounds what a request record holds. */
  readonly bodyBytes?: number;
  /** Image parts: promptTokens counts IMAGE_TOKENS each; models that bill more are charged the rest (core/estimate.ts). */
  readonly images: number;
}

/** One upstream call (a retry is a call of its own) that ended without an answer. */
export interface FailedAttempt {
  target: Target;
  /** The UpstreamError's reason, or `client_abort`: the client left while this call was in flight. */
  reason: FailureReason | 'client_abort';
  /** The provider's HTTP status; 0 when none arrived. */
  upstreamStatus: number;
  /** This failure opened the provider's circuit (its breaker's threshold was reached by it). */
  openedCircuit?: boolean;
}

export interface Outcome {
  target?: Target;
  /** Upstream calls made, all candidates together (1 for a first-try success, 0 for a cache hit). */
  attempts: number;
  /** Calls that repeated a failed one on the same target. */
  retries: number;
  /** Times the request moved on to another candidate. */
  fallbacks: number;
  usage?: Usage;
  /** USD, from usage × catalog price; 0 on a cache hit; undefined when the price is unknown. */
  cost?: number;
  /** USD a cache hit saved: what the cached answer cost when it was generated. */
  savedUsd?: number;
  /** The complete answer (non-stream), for the cache and logs. */
  completion?: ChatCompletion;
  /** `completion` as the client received it (chat API): the cache stores these bytes instead of serializing it again. */
  completionJson?: string | Buffer;
  /** The vectors of an embeddings request (floats, as the adapters return them). */
  embeddings?: EmbeddingsResponse;
  /** Chunks as sent, collected only when `collectChunks` was set (the cache asks for them). */
  chunks?: ChatChunk[];
  /** Generated text and tool-call arguments as received, to bill an aborted stream that sent no usage. */
  generated: string[];
  /** ms from request start to the first content sent (streams). */
  ttftMs?: number;
  /** Mean ms between content chunks after the first (streams with at least two). */
  interTokenMs?: number;
  /** ms spent waiting on upstreams, summed over attempts. */
  upstreamMs: number;
  /** ms spent waiting between upstream calls on purpose (retry backoffs, MODELGATE_FAILOVER_DELAY): neither upstream time nor the gateway's own. */
  waitedMs: number;
  /** The stream ended early: the client went away or the provider failed after the first byte. */
  interrupted?: 'client_abort' | 'upstream_error';
  /** How the provider failed after the first byte (the client got an error event), for the log. */
  streamFailure?: { provider: string; reason: string; message: string };
  cache?: 'HIT' | 'MISS' | 'BYPASS';
  /**
   * Every upstream call that ended without an answer, in order, pushed by the failover step before
   * the next call or the next target's beforeAttempt hooks run (the cost guard bills some of them:
   * plugins/cost/attempts.ts). Not included: calls never made (open circuit, refused target).
   */
  failedAttempts: FailedAttempt[];
}

/** The experiment arm a request was assigned (plugins/experiments.ts). */
export interface Assignment {
  experimentId: string;
  experimentName: string;
  arm: string;
  /** The unit as the request gave it (its `user`, key id or header); stored only as a pseudonym. */
  unit: string;
}

export interface RequestContext {
  readonly id: string;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The client's headers, captured before forwarding reuses `req` for the upstream call. */
  readonly headers: IncomingHttpHeaders;
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly route: string;
  /** Path parameters of the route, e.g. `provider` of /v1/providers/{provider}/test. */
  readonly params: Record<string, string>;
  readonly startedAt: number;
  /** The TCP peer; the IP filter may replace it with the client behind a trusted proxy. */
  clientIp: string;
  /** Aborted when the client disconnects before the response ends. */
  readonly signal: Cancellation;
  readonly log: Logger;
  principal?: Principal;
  chat?: ChatState;
  /** Set when the request entered an A/B experiment: the cache keeps arms apart, the experiment records it. */
  experiment?: Assignment;
  /** The failover chain chosen by the router, best first. */
  candidates?: Target[];
  /** The strategy the router used. */
  strategy?: string;
  outcome: Outcome;
  /** Headers every response to this request carries (x-ratelimit-*, …), set by plugins. */
  responseHeaders: Record<string, string>;
  /** Set by a plugin that wants the streamed chunks kept on `outcome.chunks`. */
  collectChunks: boolean;
  /**
   * Called by the failover step, in order, before it starts calling a target (once per target, not
   * per retry), with that target (e.g. the cost guard reserves its estimate). May throw a
   * GatewayError to refuse: for the chain's first candidate (the client's own choice) the request
   * ends with it; a later candidate is skipped, the refusal kept for the final answer. No upstream
   * call is made to a refused target.
   */
  beforeAttempt: Array<(target: Target) => Promise<void> | void>;
  /**
   * Called by the failover step before each retry on the same target (e.g. the cost guard makes
   * sure the budget holds another call that may be billed). A GatewayError thrown here ends the
   * request with it; no further call is made.
   */
  beforeRetry: Array<(target: Target) => Promise<void> | void>;
  /** The client left before the response ended (reported as status 499). */
  clientGone?: boolean;
  /** ms spent in each pipeline step (its own time), recorded only with MODELGATE_LOG_PERFORMANCE. */
  stagesMs?: Record<string, number>;
  /** The status sent, and the error if the response was an error. */
  status?: number;
  error?: GatewayError;
}

export function newOutcome(): Outcome {
  return { attempts: 0, retries: 0, fallbacks: 0, generated: [], upstreamMs: 0, waitedMs: 0, failedAttempts: [] };
}

/** A client's own x-request-id is kept when it is a plain token; otherwise one is generated. */
const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The context a request starts with, before any route or step has looked at it. */
export function requestContext(req: IncomingMessage, res: ServerResponse, log: Logger, signal: Cancellation): RequestContext {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const incomingId = req.headers['x-request-id'];
  return {
    id: typeof incomingId === 'string' && REQUEST_ID.test(incomingId) ? incomingId : randomUUID(),
    req,
    res,
    headers: req.headers,
    method: req.method ?? 'GET',
    path: q === -1 ? url : url.slice(0, q),
    query: new URLSearchParams(q === -1 ? '' : url.slice(q + 1)),
    route: '',
    params: {},
    startedAt: performance.now(),
    clientIp: normalizeIp(req.socket.remoteAddress),
    signal,
    log,
    outcome: newOutcome(),
    responseHeaders: {},
    collectChunks: false,
    beforeAttempt: [],
    beforeRetry: [],
  };
}

/** `::ffff:10.0.0.1` → `10.0.0.1`, so IPv4 clients on a dual-stack socket read as IPv4. */
export function normalizeIp(address: string | undefined): string {
  if (!address) return '';
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}
