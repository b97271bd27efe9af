// HTTP over a bare TCP socket, for what fetch and the SDK would never send: a body that never ends,
// headers that trickle in, a malformed request line. Records the answer and when the server closed.
import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  /** The body as text; `json` when it parses. */
  body: string;
  json: any;
  /** ms from connecting to the server closing the connection; undefined if it had not closed by the deadline. */
  closedAfterMs: number | undefined;
}

export interface RawExchange {
  /** Written once connected. */
  send: string;
  /** Written every `everyMs` after that, until the connection closes (a body or headers that never end). */
  drip?: { chunk: string; everyMs: number };
  /** Give up waiting for the close after this many ms (the answer is then what arrived). */
  deadlineMs: number;
  /** The client's own address (any of 127.0.0.0/8 on Linux): another client, as the server sees it. */
  from?: string;
}

/** The port of a gateway base URL such as http://127.0.0.1:1234/v1. */
export function portOf(url: string): number {
  return Number(new URL(url).port);
}

/** Opens a connection and keeps it open (sending nothing) until the returned socket is destroyed. */
export function openIdle(port: number, from?: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: from }, () => resolve(socket));
    socket.on('error', reject);
  });
}

export function exchange(port: number, request: RawExchange): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const started = performance.now();
    const received: Buffer[] = [];
    let closedAfterMs: number | undefined;
    let dripping: NodeJS.Timeout | undefined;
    const socket = connect({ port, host: '127.0.0.1', localAddress: request.from }, () => {
      socket.write(request.send);
      if (request.drip) {
        const { chunk, everyMs } = request.drip;
        dripping = setInterval(() => socket.writable && socket.write(chunk), everyMs);
      }
    });
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    // A write racing the server's close may fail; what the server sent before is what counts.
    socket.on('error', () => undefined);
    const done = () => {
      clearInterval(dripping);
      clearTimeout(deadline);
      socket.destroy();
      resolve(parse(Buffer.concat(received).toString('latin1'), closedAfterMs));
    };
    socket.on('close', () => {
      closedAfterMs = performance.now() - started;
      done();
    });
    const deadline = setTimeout(done, request.deadlineMs);
  });
}

function parse(text: string, closedAfterMs: number | undefined): RawAnswer {
  const split = text.indexOf('\r\n\r\n');
  const head = split === -1 ? text : text.slice(0, split);
  const body = split === -1 ? '' : text.slice(split + 4);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  return { status: Number(statusLine.split(' ')[1] ?? 0), headers, body, json, closedAfterMs };
}
