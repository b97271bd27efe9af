// A raw HTTP/1.1 client over one TCP socket, for what fetch and http.request refuse to send: lying
// Content-Length, hand-made chunked encodings, invalid bytes in headers, truncated bodies, early
// closes, pipelined requests. It plays a script of writes, pauses and closes while it parses the
// responses that come back (Content-Length, chunked or to the close), and reports what happened.
import net from 'node:net';

export type Header = readonly [string, string | Buffer];

export type WireStep = { write: Buffer } | { pause: number } | { end: true } | { destroy: true };

export interface RawResponse {
  status: number;
  head: string;
  headers: Record<string, string[]>;
  body: Buffer;
}

export interface Exchange {
  responses: RawResponse[];
  /** The server ended or closed the connection (and when, in ms after the last step). */
  closedByServer: boolean;
  closedAfterMs?: number;
  /** The expected responses did not arrive within the time limit. */
  timedOut: boolean;
  /** Bytes after the last complete response (a response cut short, or unparseable). */
  leftover: Buffer;
  socketError?: string;
}

/** One request's bytes: request line, headers as given (duplicates and raw bytes included), body. */
export function requestBytes(method: string, path: string, headers: readonly Header[], body?: Buffer): Buffer {
  const parts: Buffer[] = [Buffer.from(`${method} ${path} HTTP/1.1\r\n`, 'latin1')];
  for (const [name, value] of headers) parts.push(Buffer.from(`${name}: `, 'latin1'), typeof value === 'string' ? Buffer.from(value, 'latin1') : value, Buffer.from('\r\n'));
  parts.push(Buffer.from('\r\n'));
  if (body) parts.push(body);
  return Buffer.concat(parts);
}

/** `body` as chunked transfer coding, cut into chunks of at most `size` bytes. */
export function chunked(body: Buffer, size: number, extension = ''): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; i < body.length; i += size) {
    const chunk = body.subarray(i, i + size);
    parts.push(Buffer.from(`${chunk.length.toString(16)}${extension}\r\n`), chunk, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

/** Parses one response from the front of `data`; undefined while incomplete. `toClose`: the body runs to the end of the connection. */
function parseResponse(data: Buffer, head: boolean, closed: boolean): { response: RawResponse; rest: Buffer } | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const headText = data.subarray(0, end).toString('latin1');
  const [statusLine, ...lines] = headText.split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
  const headers: Record<string, string[]> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    (headers[name] ??= []).push(line.slice(colon + 1).trim());
  }
  let rest = data.subarray(end + 4);
  const done = (body: Buffer, after: Buffer) => ({ response: { status, head: headText, headers, body }, rest: after });
  if (head || status === 204 || status === 304 || (status >= 100 && status < 200)) return done(Buffer.alloc(0), rest);
  if (headers['transfer-encoding']?.some((v) => /chunked/i.test(v))) {
    const chunks: Buffer[] = [];
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      if (lineEnd < 0) return undefined;
      const size = parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
      if (Number.isNaN(size)) return done(Buffer.concat(chunks), rest);
      if (rest.length < lineEnd + 2 + size + 2) return undefined;
      if (size === 0) {
        const trailerEnd = rest.indexOf('\r\n', lineEnd + 2);
        return done(Buffer.concat(chunks), rest.subarray(trailerEnd + 2));
      }
      chunks.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      rest = rest.subarray(lineEnd + 2 + size + 2);
    }
  }
  const length = headers['content-length']?.[0];
  if (length !== undefined) {
    const n = Number(length);
    if (rest.length < n) return undefined;
    return done(rest.subarray(0, n), rest.subarray(n));
  }
  return closed ? done(rest, Buffer.alloc(0)) : undefined;
}

export interface ExchangeOptions {
  /** Responses due (one per complete request sent); the exchange ends when they are all in. */
  expect: number;
  /** Which of the expected responses answer a HEAD request (no body). */
  heads?: boolean[];
  timeoutMs: number;
  /** After the responses: how long to wait for the server to close the connection. */
  watchCloseMs?: number;
}

export function exchange(port: number, steps: readonly WireStep[], options: ExchangeOptions): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const responses: RawResponse[] = [];
    let data: Buffer = Buffer.alloc(0);
    let closed = false;
    let closedAt: number | undefined;
    let stepsDoneAt: number | undefined;
    let socketError: string | undefined;
    let finished = false;
    let closeWatch: NodeJS.Timeout | undefined;
    let destroyedByUs = false;

    const finish = (timedOut: boolean) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      clearTimeout(closeWatch);
      socket.destroy();
      const closedAfterMs = closedAt !== undefined && stepsDoneAt !== undefined ? Math.max(0, closedAt - stepsDoneAt) : undefined;
      resolve({ responses, closedByServer: closed, closedAfterMs, timedOut, leftover: data, socketError });
    };
    const timer = setTimeout(() => finish(responses.length < options.expect), options.timeoutMs);
    const parse = () => {
      for (;;) {
        const parsed = parseResponse(data, options.heads?.[responses.length] === true, closed);
        if (!parsed) break;
        data = parsed.rest;
        // 100 Continue is interim: the real answer follows.
        if (parsed.response.status >= 100 && parsed.response.status < 200) continue;
        responses.push(parsed.response);
        if (closed && data.length === 0) break;
      }
      if (responses.length >= options.expect && !finished && stepsDoneAt !== undefined) {
        if (closed || !options.watchCloseMs) return finish(false);
        closeWatch ??= setTimeout(() => finish(false), options.watchCloseMs);
      }
    };
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      parse();
    });
    const onClosed = () => {
      if (destroyedByUs) return finish(false);
      if (!closed) {
        closed = true;
        closedAt = performance.now();
      }
      parse();
      if (stepsDoneAt !== undefined) finish(responses.length < options.expect);
    };
    socket.on('end', onClosed);
    socket.on('close', onClosed);
    socket.on('error', (error: NodeJS.ErrnoException) => {
      socketError = error.code ?? error.message;
    });
    socket.once('connect', async () => {
      for (const step of steps) {
        if (finished || socket.destroyed) break;
        if ('write' in step) await new Promise<void>((done) => socket.write(step.write, () => done()));
        else if ('pause' in step) await new Promise((done) => setTimeout(done, step.pause));
        else if ('end' in step) socket.end();
        else {
          destroyedByUs = true;
          socket.destroy();
        }
      }
      stepsDoneAt = performance.now();
      if (closed) return finish(responses.length < options.expect);
      parse();
    });
  });
}
