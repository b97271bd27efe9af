// The forwarding step, on http-proxy: sends one translated request upstream over a keep-alive
// agent and hands back the provider's response unread (selfHandleResponse), so the caller can
// translate it. Upstream headers are exactly the adapter's: the client's credentials, cookies and
// hop-by-hop headers never leave. An abort (client gone, attempt timed out, retry cancelled)
// destroys the upstream request.
//
// Connections: one keep-alive agent per protocol, at most `maxSockets` (512) concurrent
// connections per provider origin. Beyond that, upstream requests wait in the agent's queue, and
// the wait counts against the attempt's timeout (MODELGATE_TIMEOUT); an attempt that ends while
// queued (timeout, client gone) leaves the queue without being sent.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import { createGunzip, createInflate, createBrotliDecompress } from 'node:zlib';
import { pipeline, type Readable, type Transform } from 'node:stream';
import { createProxyServer } from 'http-proxy-3';
import type { UpstreamRequest } from './provider.js';
import type { Cancellation } from './cancellation.js';

export class AbortedError extends Error {
  override name = 'AbortedError';
}

export interface ForwarderOptions {
  /** Concurrent upstream connections per origin (host:port); more requests queue. Default 512. */
  maxSockets?: number;
}

export class Forwarder {
  private readonly proxy = createProxyServer({ selfHandleResponse: true, ignorePath: true, changeOrigin: true, xfwd: false });
  private readonly agents;

  constructor(options: ForwarderOptions = {}) {
    const agent = { keepAlive: true, maxSockets: options.maxSockets ?? 512, maxFreeSockets: 64, scheduling: 'lifo' as const };
    this.agents = { http: new http.Agent(agent), https: new https.Agent(agent) };
    // Errors are delivered through the per-call callback; this keeps stray ones from crashing.
    this.proxy.on('error', () => {});
  }

  /**
   * Sends `upstream` and resolves with the provider's response (status and headers read, body not).
   * `req`/`res` are the client's: http-proxy uses them for lifecycle (a client that goes away
   * destroys the upstream request too).
   *
   * Each call owns its upstream request: http-proxy hands it to our `buffer.pipe` synchronously,
   * before the agent gives it a socket, so an attempt that ends early destroys exactly its own
   * request — even one still queued for a socket — and only that request's response can resolve
   * this call. (Looking the attempt up on the shared client `req` when the socket arrives, as the
   * proxyReq/proxyRes events allow, let a stale queued request be sent and answer a newer attempt.)
   */
  send(req: IncomingMessage, res: ServerResponse, upstream: UpstreamRequest, signal: Cancellation): Promise<IncomingMessage> {
    return new Promise<IncomingMessage>((resolve, reject) => {
      let proxyReq: http.ClientRequest | undefined;
      let settled = false;
      const onAbort = () => fail(new AbortedError(String(signal.reason ?? 'aborted')));
      const settle = () => {
        settled = true;
        signal.removeEventListener('abort', onAbort);
      };
      const fail = (error: Error) => {
        if (settled) return;
        settle();
        proxyReq?.destroy();
        reject(error);
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });

      const body = upstream.body;
      // Identity: no compression buffering in streams, no inflate cost; decodedBody() copes if ignored.
      const headers: Record<string, string> = { ...upstream.headers, 'accept-encoding': 'identity' };
      if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
      // http-proxy starts from the incoming headers; the upstream must see only ours.
      req.headers = {};
      const url = this.parse(upstream.url);
      // http-proxy adds a 'close' listener to `res` and an 'error' listener to `req` per call; a
      // request with many attempts would pass Node's limit of 10 (MaxListenersExceededWarning) and
      // keep every attempt's upstream request reachable. They are removed when the attempt's
      // upstream request closes (our abort handling covers the client going away after that).
      // http-proxy appends them (`on`) while web() runs: they are the lists' ends past these counts.
      const closeBefore = res.listenerCount('close');
      const errorBefore = req.listenerCount('error');
      this.proxy.web(
        req,
        res,
        {
          target: url,
          method: upstream.method,
          headers,
          agent: url.protocol === 'https:' ? this.agents.https : this.agents.http,
          // http-proxy only calls pipe(), with the upstream request it just created; ending it with
          // the whole body at once avoids a stream object per request.
          buffer: {
            pipe: (destination: http.ClientRequest) => {
              proxyReq = destination;
              destination.once('response', (response: IncomingMessage) => {
                if (settled) {
                  response.destroy();
                  return;
                }
                settle();
                resolve(response);
              });
              destination.end(body);
            },
          } as unknown as Readable,
        },
        (error) => fail(error as Error),
      );
      const added = { close: res.listeners('close').slice(closeBefore), error: req.listeners('error').slice(errorBefore) };
      const own = proxyReq as http.ClientRequest | undefined;
      if (!own) return fail(new Error('http-proxy did not create the upstream request'));
      own.once('close', () => {
        for (const listener of added.close) res.removeListener('close', listener as () => void);
        for (const listener of added.error) req.removeListener('error', listener as () => void);
      });
      if (settled) own.destroy(); // aborted while http-proxy was setting up
    });
  }

  /** Upstream URLs repeat (one per provider endpoint and model): parse each once. */
  private readonly urls = new Map<string, URL>();
  private parse(href: string): URL {
    let url = this.urls.get(href);
    if (!url) {
      url = new URL(href);
      if (this.urls.size > 1000) this.urls.clear();
      this.urls.set(href, url);
    }
    return url;
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
    this.proxy.close();
  }
}

/**
 * The response body as a stream of plain bytes, undoing any content-encoding. The decoder is joined
 * with stream.pipeline, not pipe(): destroying the response (client gone, idle timeout, abort) must
 * destroy the decoder too — with the same error, or a premature-close error — or a reader waiting on
 * the decoded stream would wait forever (pipe() only unpipes on close; the decoder never ends).
 */
export function decodedBody(response: IncomingMessage): Readable {
  let decoder: Transform;
  switch (response.headers['content-encoding']) {
    case 'gzip':
    case 'x-gzip':
      decoder = createGunzip();
      break;
    case 'br':
      decoder = createBrotliDecompress();
      break;
    case 'deflate':
      decoder = createInflate();
      break;
    default:
      return response;
  }
  // The error reaches readers through the decoder; the callback only keeps it from going unhandled.
  return pipeline(response, decoder, () => {});
}

/** Reads a whole (decoded) body, refusing more than `limit` bytes; an abort destroys the response. */
export function readBody(response: IncomingMessage, limit: number, signal?: Cancellation): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const stream = decodedBody(response);
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (error?: Error) => {
      signal?.removeEventListener('abort', onAbort);
      stream.off('data', onData).off('end', onEnd).off('error', done).off('close', onClose);
      if (error) reject(error);
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        response.destroy();
        done(new Error(`upstream body larger than ${limit} bytes`));
      } else chunks.push(chunk);
    };
    const onEnd = () => done();
    const onClose = () => done(new Error('upstream closed the connection before the body ended'));
    const onAbort = () => {
      response.destroy();
      done(new AbortedError('aborted'));
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    stream.on('data', onData).on('end', onEnd).on('error', done).on('close', onClose);
  });
}
