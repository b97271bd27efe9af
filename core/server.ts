// The HTTP server. A request's walk, top to bottom (handle() below):
//   1. requestContext() gives it an id, its path and query, the client's IP and an abort signal;
//   2. match() finds its route (404/405 otherwise);
//   3. the route's chain runs: the steps of PIPELINE (core/app.ts) that apply to the route, in that
//      order (stepsFor in core/pipeline.ts), then the route's handler;
//   4. fail() renders anything thrown as OpenAI's error body — the only place errors are written;
//   5. finish(), once the response has closed and the chain has settled, tells the observers
//      (metrics, cost) and writes the request's log line.
// Shutdown is graceful: stop accepting, let in-flight requests and streams finish within a bound,
// then close. Connections are bounded (core/connections.ts): their number, how long a request may
// take to arrive, and a refused request's body is not read — its connection closes after the answer.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { Canceller } from './cancellation.js';
import { answerClientError, answerConnect, answerExpectation, closeAfterAnswer, ConnectionCap, declaresBody } from './connections.js';
import { requestContext, type RequestContext } from './context.js';
import { GatewayError, toGatewayError } from './errors.js';
import { sendJson } from './respond.js';
import type { Handler, Plugin, Route } from './pipeline.js';
import { logLarge, type LoggingSettings } from './logger.js';

export interface ServerOptions {
  host: string;
  port: number;
  shutdownTimeoutMs: number;
  limits: ConnectionLimits;
  logger: Logger;
  logging: LoggingSettings;
  routes: readonly Route[];
  /** The chain for a route: its plugins and then its handler. */
  chainFor(route: Route): Handler;
  /** Plugins with observe(), told about every finished request. */
  observers: readonly Plugin[];
}

/** The MODELGATE_* connection settings (core/server-settings.ts). */
export interface ConnectionLimits {
  headersTimeoutMs: number;
  /** Receiving the whole request; Node stops counting once the request has arrived, so responses are not cut. */
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
  /** 0: no cap per client address. */
  maxConnectionsPerAddress?: number;
}

/** How often Node checks the header and request timeouts: their precision. Node's default, 30 s, would let a 10 s timeout last 40 s. */
const TIMEOUT_CHECK_INTERVAL_MS = 1000;

/** After the shutdown timeout cut the remaining connections: how long their pipelines may take to settle. */
const SETTLE_AFTER_CLOSE_MS = 3000;

interface CompiledRoute {
  route: Route;
  pattern?: RegExp;
  names: string[];
  run: Handler;
}

/** The port cannot be taken (in use, not permitted, no such address): the start stops with one line. */
export class ListenError extends Error {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'ListenError';
  }
}

/** What went wrong when listening, in words that name the settings to change. */
export function listenError(error: unknown, host: string, port: number): Error {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `${host}:${port}`;
  if (code === 'EADDRINUSE') return new ListenError(`port ${port} is already in use (${where}): stop what holds it, or set MODELGATE_PORT to a free port`, { cause: error });
  if (code === 'EACCES') return new ListenError(`not permitted to listen on ${where}: ports below 1024 need privileges; set MODELGATE_PORT to 1024 or above`, { cause: error });
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new ListenError(`cannot listen on ${where}: MODELGATE_HOST is not an address of this machine`, { cause: error });
  return error as Error;
}

export class GatewayServer {
  readonly server: http.Server;
  private readonly inflight = new Set<RequestContext>();
  private readonly exact = new Map<string, CompiledRoute[]>();
  private readonly patterns: CompiledRoute[] = [];
  private readonly cap: ConnectionCap;
  private closing: Promise<void> | undefined;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly options: ServerOptions) {
    for (const route of options.routes) {
      const names: string[] = [];
      const compiled: CompiledRoute = { route, names, run: options.chainFor(route) };
      if (route.path.includes('{')) {
        const source = route.path
          .split(/(\{\w+\+?\})/)
          .map((part) => {
            const param = /^\{(\w+)(\+?)\}$/.exec(part);
            if (!param) return part.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
            names.push(param[1]!);
            // `{name+}` takes the rest of the path, slashes included: ids such as `openai/gpt-4o`.
            return param[2] ? '(.+)' : '([^/]+)';
          })
          .join('');
        compiled.pattern = new RegExp(`^${source}$`);
        this.patterns.push(compiled);
      } else {
        const list = this.exact.get(route.path) ?? [];
        list.push(compiled);
        this.exact.set(route.path, list);
      }
    }
    const { limits } = options;
    this.server = http.createServer(
      {
        headersTimeout: limits.headersTimeoutMs,
        requestTimeout: limits.requestTimeoutMs,
        keepAliveTimeout: limits.keepAliveTimeoutMs,
        connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
      },
      (req, res) => void this.handle(req, res),
    );
    this.cap = new ConnectionCap(this.server, limits.maxConnections, limits.maxConnectionsPerAddress);
    this.server.on('clientError', answerClientError);
    this.server.on('connect', answerConnect);
    this.server.on('checkExpectation', answerExpectation);
  }

  listen(): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off('error', reject);
        resolve(this.server.address() as AddressInfo);
      });
    });
  }

  get inflightCount(): number {
    return this.inflight.size;
  }

  /** Stops accepting, waits for in-flight requests (at most shutdownTimeoutMs), closes connections. */
  shutdown(): Promise<void> {
    this.closing ??= (async () => {
      const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
      this.server.closeIdleConnections();
      if (this.inflight.size > 0) {
        this.options.logger.info({ inflight: this.inflight.size }, 'shutting down: waiting for in-flight requests');
        await this.drained(this.options.shutdownTimeoutMs);
        if (this.inflight.size > 0) this.options.logger.warn({ inflight: this.inflight.size }, 'shutdown timeout: closing remaining requests');
      }
      this.server.closeAllConnections();
      // Cut requests unwind (upstream closed, usage billed) before the stores close behind them.
      if (this.inflight.size > 0) await this.drained(SETTLE_AFTER_CLOSE_MS);
      await closed;
    })();
    return this.closing;
  }

  /** Resolves when no request is in flight, or after `ms`. */
  private async drained(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => this.idleWaiters.push(resolve)),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
    ]);
    clearTimeout(timer);
  }

  private match(method: string, path: string): { compiled: CompiledRoute; params: Record<string, string> } {
    let candidates = this.exact.get(path);
    let params: Record<string, string> = {};
    if (!candidates) {
      for (const compiled of this.patterns) {
        const found = compiled.pattern!.exec(path);
        if (!found) continue;
        candidates = [...(candidates ?? []), compiled];
        params = Object.fromEntries(compiled.names.map((name, i) => [name, decodePathSegment(found[i + 1]!, name)]));
      }
    }
    if (!candidates) throw new GatewayError('route_not_found', { message: `Unknown endpoint: ${method} ${path}` });
    // HEAD is GET without the body (RFC 9110 §9.3.2; Node leaves the body out): load balancers probe with it.
    const wanted = method === 'HEAD' ? 'GET' : method;
    const compiled = candidates.find((c) => c.route.method === wanted);
    if (!compiled) {
      const allowed = candidates.map((c) => c.route.method);
      throw new GatewayError('method_not_allowed', {
        message: `Method ${method} is not allowed on ${path}`,
        headers: { allow: (allowed.includes('GET') ? [...allowed, 'HEAD'] : allowed).join(', ') },
      });
    }
    return { compiled, params };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const abort = new Canceller();
    const ctx = requestContext(req, res, this.options.logger, abort);
    this.inflight.add(ctx);
    const socket = req.socket;
    const overCap = this.cap.isOver(socket);
    if (this.closing || overCap) res.setHeader('connection', 'close');
    // Answered before its body was read (refused, or a route that reads none): Node would read the
    // rest to keep the connection, for as long as the client sends. Close it instead.
    res.once('finish', () => {
      if (!req.complete) closeAfterAnswer(socket);
    });
    // A request is over when its response has closed AND its pipeline has settled: a client that
    // leaves mid-stream closes the response first, while the cost guard is still billing.
    let closed = false;
    let settled = false;
    const over = () => closed && settled && this.finish(ctx);
    res.once('close', () => {
      if (!res.writableFinished) {
        ctx.clientGone = true;
        abort.abort(new Error('client disconnected'));
      }
      closed = true;
      over();
    });
    try {
      const { compiled, params } = this.match(ctx.method, ctx.path);
      (ctx as { route: string }).route = `${compiled.route.method} ${compiled.route.path}`;
      (ctx as { params: Record<string, string> }).params = params;
      // Past the connection cap only health checks are served: load balancers must still see the gateway alive.
      if (overCap && !compiled.route.open) throw this.cap.error();
      await compiled.run(ctx);
      if (!res.headersSent && !ctx.signal.aborted) throw new Error(`no response from ${ctx.route}`);
    } catch (error) {
      this.fail(ctx, error);
    } finally {
      settled = true;
      over();
    }
  }

  private fail(ctx: RequestContext, thrown: unknown): void {
    const error = toGatewayError(thrown);
    ctx.error = error;
    if (ctx.res.headersSent || ctx.signal.aborted) {
      ctx.status ??= error.status;
      return;
    }
    const headers: Record<string, string> = { ...error.headers };
    // A refused request's body may still be arriving (a refusal answers before reading it, a 413 or
    // 408 stops reading it): close rather than read it.
    if (declaresBody(ctx.req) && !ctx.req.complete) headers.connection = 'close';
    sendJson(ctx, error.status, error.toBody(), headers);
  }

  private finish(ctx: RequestContext): void {
    this.inflight.delete(ctx);
    // 499 (nginx's "client closed request"): the client left before the response ended.
    if (ctx.clientGone) ctx.status = 499;
    else ctx.status ??= ctx.res.statusCode;
    for (const observer of this.options.observers) {
      try {
        observer.observe!(ctx);
      } catch (error) {
        ctx.log.error({ err: error, plugin: observer.name }, 'observer failed');
      }
    }
    this.logRequest(ctx);
    if (this.inflight.size === 0 && this.idleWaiters.length > 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private logRequest(ctx: RequestContext): void {
    const { logging, logger } = this.options;
    const status = ctx.status ?? 0;
    const durationMs = round(performance.now() - ctx.startedAt);
    // Failures are logged here only, once each, under MODELGATE_LOG_ERRORS: a refusal or failure
    // with what the step that raised it knew (`cause`), and a stream that broke after its first byte.
    if (logging.MODELGATE_LOG_ERRORS && (ctx.error || ctx.outcome.streamFailure)) {
      const fields = { requestId: ctx.id, status, route: ctx.route || ctx.path, clientIp: ctx.clientIp };
      const cause = ctx.error?.cause;
      if (!ctx.error) logger.warn({ ...fields, ...ctx.outcome.streamFailure }, 'stream failed after the first byte');
      else if (status >= 500) logger.error({ ...fields, code: ctx.error.code, message: ctx.error.message, err: cause instanceof Error ? cause : ctx.error, detail: cause instanceof Error ? undefined : cause }, 'request failed');
      else logger.warn({ ...fields, code: ctx.error.code, message: ctx.error.message, detail: cause }, 'request refused');
    }
    if (!logging.MODELGATE_LOG_REQUESTS && !logging.MODELGATE_LOG_RESPONSES && !logging.MODELGATE_LOG_PERFORMANCE) return;
    const outcome = ctx.outcome;
    const line: Record<string, unknown> = {
      requestId: ctx.id,
      method: ctx.method,
      path: ctx.path,
      status,
      durationMs,
      keyId: ctx.principal?.keyId,
      model: ctx.chat?.body.model,
      provider: outcome.target?.provider.name,
      routedModel: outcome.target?.model.id,
      attempts: outcome.attempts || undefined,
      cache: outcome.cache,
      cost: outcome.cost,
      usage: outcome.usage,
      interrupted: outcome.interrupted,
    };
    if (logging.MODELGATE_LOG_PERFORMANCE) {
      line.upstreamMs = round(outcome.upstreamMs);
      line.overheadMs = round(durationMs - outcome.upstreamMs - outcome.waitedMs);
      if (outcome.ttftMs !== undefined) line.ttftMs = round(outcome.ttftMs);
      if (ctx.stagesMs) line.stagesMs = Object.fromEntries(Object.entries(ctx.stagesMs).map(([stage, ms]) => [stage, round(ms)]));
    }
    if (logging.MODELGATE_LOG_REQUESTS && ctx.chat) line.request = ctx.chat.body;
    if (logging.MODELGATE_LOG_RESPONSES) line.response = outcome.completion ?? (outcome.generated.length > 0 ? outcome.generated.join('') : undefined);
    // Bodies may be large: masked and anonymized without holding the event loop.
    if (line.request !== undefined || line.response !== undefined) logLarge(logger, line, 'request');
    else logger.info(line, 'request');
  }
}

function decodePathSegment(segment: string, name: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new GatewayError('bad_request', { param: name, message: `Invalid value for '${name}': not a valid percent-encoded path segment.` });
  }
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
