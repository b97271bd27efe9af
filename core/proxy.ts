// The forwarding step, on http-proxy: sends one translated request upstream over a keep-alive
// agent and hands back the provider's response unread (selfHandleResponse), so the caller can
// translate it. Upstream headers are exactly the adapter's: the client's credentials, cookies and
// hop-by-hop headers never leave. An abort (client gone, attempt timed out, retry cancelled)
// destroys the upstream request.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import { createGunzip, createInflate, createBrotliDecompress } from 'node:zlib';
import { pipeline, type Readable, type Transform } from 'node:stream';
import { createProxyServer } from 'http-proxy-3';
import type { UpstreamRequest } from '../providers/types.js';

const PENDING = Symbol('modelgate.pendingUpstream');

interface Pending {
  resolve(response: IncomingMessage): void;
  reject(error: Error): void;
  proxyReq?: http.ClientRequest;
  settled: boolean;
}

type ProxiedRequest = IncomingMessage & { [PENDING]?: Pending };

export class AbortedError extends Error {
  override name = 'AbortedError';
}

export class Forwarder {
  private readonly proxy = createProxyServer({ selfHandleResponse: true, ignorePath: true, changeOrigin: true, xfwd: false });
  private readonly agents = {
    http: new http.Agent({ keepAlive: true, maxSockets: 512, maxFreeSockets: 64, scheduling: 'lifo' }),
    https: new https.Agent({ keepAlive: true, maxSockets: 512, maxFreeSockets: 64, scheduling: 'lifo' }),
  };

  constructor() {
    this.proxy.on('proxyReq', (proxyReq, req) => {
      const pending = (req as ProxiedRequest)[PENDING];
      if (!pending) return;
      pending.proxyReq = proxyReq;
      if (pending.settled) proxyReq.destroy();
    });
    this.proxy.on('proxyRes', (proxyRes, req) => {
      const pending = (req as ProxiedRequest)[PENDING];
      if (!pending || pending.settled) {
        proxyRes.destroy();
        return;
      }
      pending.settled = true;
      pending.resolve(proxyRes);
    });
    // Errors are delivered through the per-call callback; this keeps stray ones from crashing.
    this.proxy.on('error', () => {});
  }

  /**
   * Sends `upstream` and resolves with the provider's response (status and headers read, body not).
   * `req`/`res` are the client's: http-proxy uses them for lifecycle (a client that goes away
   * destroys the upstream request too).
   */
  send(req: IncomingMessage, res: ServerResponse, upstream: UpstreamRequest, signal: AbortSignal): Promise<IncomingMessage> {
    return new Promise<IncomingMessage>((resolve, reject) => {
      const proxied = req as ProxiedRequest;
      const pending: Pending = { resolve, reject, settled: false };
      proxied[PENDING] = pending;
      const onAbort = () => fail(new AbortedError(String(signal.reason ?? 'aborted')));
      const fail = (error: Error) => {
        signal.removeEventListener('abort', onAbort);
        if (pending.settled) return;
        pending.settled = true;
        pending.proxyReq?.destroy();
        reject(error);
      };
      pending.resolve = (response) => {
        signal.removeEventListener('abort', onAbort);
        resolve(response);
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
      this.proxy.web(
        req,
        res,
        {
          target: url,
          method: upstream.method,
          headers,
          agent: url.protocol === 'https:' ? this.agents.https : this.agents.http,
          // http-proxy only calls pipe(); ending the upstream request with the whole body at once
          // avoids a stream object per request.
          buffer: { pipe: (destination: http.ClientRequest) => destination.end(body) } as unknown as Readable,
        },
        (error) => fail(error as Error),
      );
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
export function readBody(response: IncomingMessage, limit: number, signal?: AbortSignal): Promise<Buffer> {
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
