// Writing responses to the client: JSON bodies and the headers that say what happened
// (x-request-id, x-modelgate-*, plugin headers such as x-ratelimit-*). Errors are written only by
// the server (core/server.ts) through sendJson.
import type { OutgoingHttpHeaders } from 'node:http';
import type { ChatCompletion } from './chat-types.js';
import type { RequestContext } from './context.js';
import { writableHeaders } from './header-values.js';

export function baseHeaders(ctx: RequestContext): OutgoingHttpHeaders {
  return { 'x-request-id': ctx.id, ...ctx.responseHeaders };
}

/** What the gateway did for this chat request: provider, model, strategy, attempts, cache, cost. */
export function outcomeHeaders(ctx: RequestContext): Record<string, string> {
  const outcome = ctx.outcome;
  const headers: Record<string, string> = {};
  if (outcome.target) {
    headers['x-modelgate-provider'] = outcome.target.provider.name;
    headers['x-modelgate-model'] = outcome.target.model.id;
  }
  if (ctx.strategy) headers['x-modelgate-strategy'] = ctx.strategy;
  if (outcome.cache) headers['x-modelgate-cache'] = outcome.cache;
  headers['x-modelgate-attempts'] = String(outcome.attempts);
  if (outcome.cost !== undefined) headers['x-modelgate-cost'] = formatCost(outcome.cost);
  return headers;
}

/** Retry-After for a wait of `ms`: whole seconds, at least 1 (HTTP has no finer unit). */
export function retryAfterSeconds(ms: number): string {
  return String(Math.max(1, Math.ceil(ms / 1000)));
}

export function formatCost(usd: number): string {
  return usd.toFixed(8).replace(/\.?0+$/, '') || '0';
}

export function sendJson(ctx: RequestContext, status: number, body: unknown, headers: OutgoingHttpHeaders = {}): void {
  writeJson(ctx, status, body, headers);
}

/** Writes `body` as JSON; returns what was written (undefined when the response was already sent or gone). */
function writeJson(ctx: RequestContext, status: number, body: unknown, headers: OutgoingHttpHeaders): string | undefined {
  if (ctx.res.headersSent || ctx.res.destroyed) return undefined;
  const payload = JSON.stringify(body);
  writePayload(ctx, status, payload, headers);
  return payload;
}

function writePayload(ctx: RequestContext, status: number, payload: string | Buffer, headers: OutgoingHttpHeaders): void {
  const res = ctx.res;
  ctx.status = status;
  // One object for every header (baseHeaders' own, filled in place), not a spread of two into a third.
  const all = Object.assign(baseHeaders(ctx), headers);
  all['content-type'] = 'application/json';
  all['content-length'] = Buffer.byteLength(payload);
  res.writeHead(status, writableHeaders(all));
  res.end(payload);
}

/** Writes `text` (a CSV report, say) with its content type; nothing when the response was already sent or gone. */
export function sendText(ctx: RequestContext, status: number, text: string, contentType: string, headers: OutgoingHttpHeaders = {}): void {
  if (ctx.res.headersSent || ctx.res.destroyed) return;
  ctx.status = status;
  ctx.res.writeHead(status, writableHeaders({ ...baseHeaders(ctx), ...headers, 'content-type': contentType, 'content-length': Buffer.byteLength(text) }));
  ctx.res.end(text);
}

export function sendCompletion(ctx: RequestContext, completion: ChatCompletion): void {
  ctx.outcome.completionJson = writeJson(ctx, 200, completion, outcomeHeaders(ctx));
}

/**
 * A completion already serialized (a cache hit's stored bytes, a provider's body the adapter left
 * as it was), written as it is; false when the response was already sent or gone.
 */
export function sendCompletionBytes(ctx: RequestContext, json: Buffer): boolean {
  if (ctx.res.headersSent || ctx.res.destroyed) return false;
  writePayload(ctx, 200, json, outcomeHeaders(ctx));
  return true;
}
