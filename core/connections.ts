// What the server does with connections rather than requests: how many it serves at once
// (MODELGATE_MAX_CONNECTIONS, and per client address MODELGATE_MAX_CONNECTIONS_PER_IP), the OpenAI-shaped answer to what Node's parser refuses before there
// is a request to hand the pipeline (a malformed request, headers too large, a request that did not
// arrive in time, CONNECT, an unsupported Expect), and closing a connection whose request body is still arriving without
// the client losing the answer.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { GatewayError } from './errors.js';

/**
 * Past MODELGATE_MAX_CONNECTIONS, this many more connections are still accepted to be told 503 (and
 * to have their health checks answered); past those, Node closes new connections at accept, so a
 * flood cannot spend the descriptors the upstream calls need on answering it.
 */
export const OVERFLOW_CONNECTIONS = 64;

/**
 * How long a connection closed while its request body still arrives keeps reading and discarding
 * it. Closing a socket with unread input sends a reset, and a reset that reaches the client before
 * it read the answer makes its TCP stack drop that answer (the reason nginx lingers too).
 */
export const LINGER_MS = 500;

/**
 * Ends `socket` after what was written to it, then destroys it after LINGER_MS unless the client
 * closed first. Node's parser meanwhile keeps reading (and discarding) the rest of the body.
 */
export function closeAfterAnswer(socket: Socket | Duplex): void {
  if (socket.destroyed) return;
  // After a `Connection: close` answer Node ends the socket and destroys it as soon as the answer is
  // written (destroySoon: once 'finish', destroy): with body still arriving, that is the reset.
  socket.off('finish', socket.destroy);
  socket.end();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/** A request that declares a body (Content-Length above 0, or chunked): one not read must not keep its connection. */
export function declaresBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * The process's open-files limit (soft), where the system tells it (Linux); undefined elsewhere.
 * Every client connection, provider connection, Redis and database connection and log file takes one.
 */
export function openFilesLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return line ? Number(line[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Client connections the cap lets in at most: the served ones and the ones told 503. */
export function acceptedAtMost(maxConnections: number): number {
  return maxConnections + OVERFLOW_CONNECTIONS;
}

/**
 * Counts open connections and marks those accepted past the cap, whose requests are refused. With
 * a cap per client address, a connection past it is closed at accept and never counted: one address
 * holding idle or slow connections keeps at most that many places. The per-address counts hold
 * only addresses with a connection open; IPv6 clients count by their /64 (one host can hold many
 * addresses of it).
 */
export class ConnectionCap {
  private open = 0;
  private readonly byAddress = new Map<string, number>();
  private readonly over = new WeakSet<object>();

  constructor(
    server: Server,
    private readonly max: number,
    /** MODELGATE_MAX_CONNECTIONS_PER_IP; 0: no cap per address. */
    private readonly maxPerAddress = 0,
  ) {
    server.maxConnections = acceptedAtMost(max);
    server.on('connection', (socket: Socket) => {
      if (maxPerAddress > 0 && !this.admitAddress(socket)) return;
      this.open += 1;
      if (this.open > max) this.over.add(socket);
      socket.once('close', () => (this.open -= 1));
    });
  }

  /** Counts the socket against its address, or closes it when the address holds its share already. */
  private admitAddress(socket: Socket): boolean {
    const address = addressGroup(socket.remoteAddress ?? '');
    const count = this.byAddress.get(address) ?? 0;
    if (count >= this.maxPerAddress) {
      socket.destroy();
      return false;
    }
    this.byAddress.set(address, count + 1);
    socket.once('close', () => {
      const left = this.byAddress.get(address)! - 1;
      if (left === 0) this.byAddress.delete(address);
      else this.byAddress.set(address, left);
    });
    return true;
  }

  /** The connection was accepted past MODELGATE_MAX_CONNECTIONS: its requests (but health checks) get 503. */
  isOver(socket: Socket): boolean {
    return this.over.has(socket);
  }

  /** Addresses with a connection open (bounded by the connections Node accepts). */
  get addresses(): number {
    return this.byAddress.size;
  }

  error(): GatewayError {
    return new GatewayError('too_many_connections', {
      message: `The gateway has too many open connections (MODELGATE_MAX_CONNECTIONS is ${this.max}); retry shortly`,
      headers: { 'retry-after': '1', connection: 'close' },
    });
  }
}

/** What one client is counted as: an IPv4 address, or the /64 of an IPv6 one (IPv4-mapped ones as IPv4). */
export function addressGroup(address: string): string {
  const bare = address.split('%')[0]!.toLowerCase();
  if (!bare.includes(':')) return bare;
  if (bare.startsWith('::ffff:') && bare.includes('.')) return bare.slice(7);
  const [head = '', tail] = bare.split('::');
  const first = head ? head.split(':') : [];
  const last = tail ? tail.split(':') : [];
  const groups = tail === undefined ? first : [...first, ...Array<string>(Math.max(0, 8 - first.length - last.length)).fill('0'), ...last];
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/**
 * Answers, with OpenAI's error body, what Node refuses before the request handler runs. Node's own
 * answer has no body, and SDKs then report an unparseable error. Registered as the server's
 * 'clientError' listener, which replaces Node's default answer.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // A parser in error reports every later chunk again: answer once.
  if (answered.has(socket)) return;
  answered.add(socket);
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  // The client is gone, or a response already started on this socket: nothing can be added to it.
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  writeRaw(socket, clientErrorAnswer(error));
  closeAfterAnswer(socket);
}

const answered = new WeakSet<Duplex>();

/** CONNECT asks the gateway to be a tunnel, which it is not: 405, as any other method it does not serve. */
export function answerConnect(req: IncomingMessage, socket: Duplex): void {
  writeRaw(socket, new GatewayError('method_not_allowed', { message: `Method CONNECT is not allowed on ${req.url ?? '/'}` }));
  // Node handed the socket over, parser detached: read and discard what still comes until it closes.
  socket.resume();
  closeAfterAnswer(socket);
}

/** An Expect other than 100-continue: 417, with a body (Node's own 417, without this 'checkExpectation' listener, has none). */
export function answerExpectation(req: IncomingMessage, res: ServerResponse): void {
  const error = new GatewayError('expectation_failed', { message: `Unsupported Expect: ${req.headers.expect}; only 100-continue is supported` });
  const body = JSON.stringify(error.toBody());
  res.writeHead(error.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close', 'x-request-id': randomUUID() });
  res.end(body);
}

function clientErrorAnswer(error: NodeJS.ErrnoException): GatewayError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new GatewayError('headers_too_large', { message: 'Request headers too large: at most 16 KB' });
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new GatewayError('payload_too_large', { message: 'Request chunk extensions too large' });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new GatewayError('request_timeout', {
        message: 'The request did not arrive in time (MODELGATE_HEADERS_TIMEOUT for its headers, MODELGATE_REQUEST_TIMEOUT for all of it)',
      });
    default:
      return new GatewayError('bad_request', { message: 'Malformed HTTP request' });
  }
}

/** A whole HTTP/1.1 response written straight to the socket: no ServerResponse exists for a request Node could not parse. */
function writeRaw(socket: Duplex, error: GatewayError): void {
  const body = JSON.stringify(error.toBody());
  const head = [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}`,
    'content-type: application/json',
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
    // Every response carries one, this too (Node could not read the client's own, if it sent one).
    `x-request-id: ${randomUUID()}`,
    ...Object.entries(error.headers).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.write(`${head.join('\r\n')}\r\n\r\n${body}`);
}
