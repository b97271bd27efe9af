// One outbound POST for webhooks and alert webhooks, written for a hostile receiver: the whole
// attempt has one deadline, redirects are not followed (a 3xx could point inside the network),
// at most 64 KiB of the answer is read, and errors never echo the URL or a header (both may hold
// secrets). With `guard`, every address connected to is checked by destination-guard.ts.
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { DeliveryError, type AttemptResult } from './types.js';
import { blockedAddress, blockedError, guardedLookup, unbracketed } from './destination-guard.js';

export interface PostOptions {
  headers?: Record<string, string>;
  /** Deadline of the whole attempt: DNS, connect, TLS, request and response headers. */
  timeoutMs: number;
  /** Refuse blocked addresses (registered webhook endpoints); off for the operator's own URLs. */
  guard: boolean;
}

export type PostResult = AttemptResult & { retryAfterMs?: number };

const USER_AGENT = 'modelgate-webhooks';
const MAX_RESPONSE_BYTES = 64 * 1024;
const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;

// Separate pools so a connection opened unguarded (an operator's alert URL) is never reused by a
// guarded delivery to the same host and port. Idle sockets are unref'd by the agent and closed
// after IDLE_SOCKET_MS, so a receiver that never closes its end does not pin them forever.
const IDLE_SOCKET_MS = 30_000;
const pooled = { keepAlive: true, timeout: IDLE_SOCKET_MS };
const agents = {
  guarded: { 'http:': new http.Agent({ ...pooled, lookup: guardedLookup }), 'https:': new https.Agent({ ...pooled, lookup: guardedLookup }) },
  open: { 'http:': new http.Agent(pooled), 'https:': new https.Agent(pooled) },
};

/**
 * POSTs a JSON body. Resolves with the status for any HTTP answer (a 3xx included); rejects with a
 * DeliveryError when no answer arrived (network error, timeout, blocked address).
 */
export function postJson(url: string, body: string, options: PostOptions): Promise<PostResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const fail = (message: string) => Promise.reject(new DeliveryError(message, { latencyMs: elapsed() }));

  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return fail('invalid URL');
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return fail('unsupported protocol');
  // net.connect does not call `lookup` for an IP literal, so the guard checks literals here.
  const host = unbracketed(target.hostname);
  const literalBlock = options.guard && isIP(host) ? blockedAddress(host) : undefined;
  if (literalBlock) return fail(describeNetworkError(blockedError(literalBlock), options.timeoutMs));

  return new Promise<PostResult>((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      outcome();
    };

    let request: http.ClientRequest;
    try {
      request = (target.protocol === 'https:' ? https : http).request(target, {
        method: 'POST',
        agent: agents[options.guard ? 'guarded' : 'open'][target.protocol as 'http:' | 'https:'],
        headers: {
          'user-agent': USER_AGENT,
          ...lowercased(options.headers ?? {}),
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      });
    } catch {
      // Node names the offending header in its message; a value with CR/LF is the usual cause.
      return reject(new DeliveryError('invalid request header', { latencyMs: elapsed() }));
    }
    // The timer also covers reading the (bounded) body after the status has been reported.
    const timer = setTimeout(() => {
      settle(() => reject(new DeliveryError(`timed out after ${options.timeoutMs} ms`, { latencyMs: elapsed() })));
      request.destroy();
    }, options.timeoutMs);

    request.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      settle(() => reject(new DeliveryError(describeNetworkError(error, options.timeoutMs), { latencyMs: elapsed() })));
    });

    request.on('response', (response) => {
      const result: PostResult = { statusCode: response.statusCode ?? null, latencyMs: elapsed() };
      const retryAfterMs = parseRetryAfter(response.headers['retry-after']);
      if (retryAfterMs !== undefined) result.retryAfterMs = retryAfterMs;
      settle(() => resolve(result));
      // The body is read only so a keep-alive connection can be reused; past the bound, the
      // connection is dropped instead.
      let received = 0;
      response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > MAX_RESPONSE_BYTES) request.destroy();
      });
      response.on('end', () => clearTimeout(timer));
      response.on('close', () => clearTimeout(timer));
      response.on('error', () => clearTimeout(timer));
    });

    request.end(body);
  });
}

/**
 * The DeliveryError for an attempt that got a non-2xx answer: 410 says the endpoint is gone (it
 * gets disabled); a Retry-After is passed on to the retry schedule.
 */
export function deliveryErrorFor(result: PostResult): DeliveryError {
  const { statusCode, latencyMs, retryAfterMs } = result;
  return new DeliveryError(statusCode === null ? 'no response' : `HTTP ${statusCode}`, { statusCode, latencyMs, retryAfterMs, gone: statusCode === 410 });
}

/** Retry-After as delay-seconds or an HTTP date, in milliseconds within [0, 1 h]. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    // Every HTTP date form opens with a day name; V8's lenient Date.parse would read '-5' as a year.
    const at = /^[A-Za-z]{3}/.test(text) ? Date.parse(text) : Number.NaN;
    if (Number.isNaN(at)) return undefined;
    ms = at - now;
  }
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

function lowercased(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

// Node's own messages name the host, the address or the certificate's names; only the code is
// kept, in words where it is a common one.
const NETWORK_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'DNS lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connect timed out',
};

function describeNetworkError(error: NodeJS.ErrnoException, timeoutMs: number): string {
  const code = error.code ?? '';
  if (code === 'EBLOCKED') return `address blocked: ${(error as NodeJS.ErrnoException & { reason?: string }).reason ?? 'unknown'}`;
  if (code === 'ABORT_ERR') return `timed out after ${timeoutMs} ms`;
  if (NETWORK_ERRORS[code]) return NETWORK_ERRORS[code];
  if (code.startsWith('HPE_')) return `invalid HTTP response (${code})`;
  if (code.includes('CERT') || code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL')) return `TLS error (${code})`;
  return code && /^[A-Z0-9_]+$/.test(code) ? `network error (${code})` : 'network error';
}
