// A scriptable fake upstream on 127.0.0.1 port 0. It records every request (path, headers, body)
// and answers with queued one-shot responders, else its default responder. Responders for the
// common shapes (JSON, SSE transcript with optional pacing, hang, close) are below, with a write
// that waits out backpressure and a reader for a client stream that fails midway; per-provider
// fakes build on it in test/helpers/fakes.ts.
import http, { type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../core/paths.js';

export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1beta/models/x:streamGenerateContent?alt=sse`. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: any;
}

export type Responder = (request: RecordedRequest, res: ServerResponse) => void | Promise<void>;

export class FakeProvider {
  readonly requests: RecordedRequest[] = [];
  /** Requests whose client went away before the response ended. */
  aborted = 0;
  private readonly queue: Responder[] = [];
  private readonly sockets = new Set<Socket>();
  private constructor(
    private readonly server: http.Server,
    public fallback: Responder,
  ) {}

  static async start(fallback: Responder): Promise<FakeProvider> {
    const server = http.createServer();
    const fake = new FakeProvider(server, fallback);
    server.on('connection', (socket) => {
      fake.sockets.add(socket);
      socket.on('close', () => fake.sockets.delete(socket));
    });
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = body ? JSON.parse(body) : undefined;
        } catch {
          json = undefined;
        }
        const recorded: RecordedRequest = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body, json };
        fake.requests.push(recorded);
        res.on('close', () => {
          if (!res.writableFinished) fake.aborted++;
        });
        const responder = fake.queue.shift() ?? fake.fallback;
        Promise.resolve(responder(recorded, res)).catch((error: unknown) => {
          if (!res.headersSent) res.writeHead(500);
          res.end(String(error));
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Answers the next request with `responder` (then back to the queue / default). */
  next(...responders: Responder[]): this {
    this.queue.push(...responders);
    return this;
  }

  get last(): RecordedRequest | undefined {
    return this.requests.at(-1);
  }

  reset(): void {
    this.requests.length = 0;
    this.queue.length = 0;
    this.aborted = 0;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export const FIXTURES = join(projectRoot, 'test', 'fixtures', 'protocol');

export function fixture(path: string): string {
  return readFileSync(join(FIXTURES, path), 'utf8');
}

export function fixtureJson(path: string): any {
  return JSON.parse(fixture(path));
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Responder {
  return (_request, res) => {
    const payload = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers });
    res.end(payload);
  };
}

/**
 * Sends an SSE transcript byte for byte, event by event (split on the blank line, LF or CRLF),
 * waiting `delayMs` between events; `stopAfter` events then hangs (or `cut`s the connection).
 */
export function sse(transcript: string, options: { delayMs?: number; stopAfter?: number; cut?: boolean; headers?: Record<string, string> } = {}): Responder {
  return async (_request, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...options.headers });
    const events = transcript.match(/[\s\S]*?(\r\n\r\n|\n\n|\r\r|$)/g)!.filter((event) => event !== '');
    let sent = 0;
    for (const event of events) {
      if (options.stopAfter !== undefined && sent === options.stopAfter) {
        if (options.cut) res.socket?.destroy();
        return; // hang: keep the connection open without ending
      }
      if (res.destroyed) return;
      res.write(event);
      sent++;
      if (options.delayMs) await sleep(options.delayMs);
    }
    res.end();
  };
}

/**
 * Writes `chunk`; when the socket's buffer is full, waits until it drains or the client goes away.
 * Whichever of the two fires, the other listener is removed: a responder that writes in a loop must
 * not pile up one 'close' listener per write (MaxListenersExceededWarning after ten).
 */
export function write(res: ServerResponse, chunk: string | Buffer): Promise<void> {
  if (res.write(chunk) || res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

/** Never answers (until the client gives up). */
export function hang(): Responder {
  return () => {};
}

/** Closes the connection without an HTTP answer. */
export function drop(): Responder {
  return (_request, res) => {
    res.socket?.destroy();
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * An SSE answer in two parts: `first` at once, `rest` only after `release()` — so a test can let the
 * rest (e.g. an error event) go only once its client has seen the first content, without timing.
 */
export function gatedSse(first: string, rest: string): { responder: Responder; release: () => void } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const responder: Responder = async (_request, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(first);
    await released;
    if (!res.destroyed) res.end(rest);
  };
  return { responder, release };
}

/**
 * Reads a client's stream to its end or its failure, releasing `gate` once the first content has
 * arrived (so what the fake sends next follows content the client already holds), and in any case
 * at the end, so the fake is never left waiting. Returns the text that arrived and what was thrown.
 */
export async function readUntilFailure(
  stream: AsyncIterable<{ choices: Array<{ delta: { content?: string | null } }> }>,
  gate: { release: () => void },
): Promise<{ text: string; failure: unknown }> {
  let text = '';
  let failure: unknown;
  try {
    for await (const chunk of stream) {
      const content = chunk.choices[0]?.delta.content;
      if (!content) continue;
      text += content;
      gate.release();
    }
  } catch (error) {
    failure = error;
  }
  gate.release();
  return { text, failure };
}
