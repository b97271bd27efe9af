// Real receivers for the events the gateway sends: an SMTP server (smtp-server, the SMTP library of
// the nodemailer project) keeping each message as received, and an HTTP receiver that verifies
// every webhook with the Standard Webhooks library and answers what the test says.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { Webhook } from 'standardwebhooks';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

export interface SmtpReceiver {
  port: number;
  mails: ReceivedMail[];
  close(): Promise<void>;
}

/** An SMTP server on 127.0.0.1 (`port` 0: any free one), without STARTTLS, accepting any login. */
export async function startSmtp(port = 0): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    hideSTARTTLS: true,
    authOptional: true,
    disableReverseLookup: true,
    logger: false,
    onAuth(auth, _session, callback) {
      callback(null, { user: auth.username });
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = (server.server.address() as AddressInfo).port;
  return { port: address, mails, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

export interface Received {
  headers: IncomingMessage['headers'];
  body: string;
  /** The body parsed, when it verified (webhooks) or was JSON (chat). */
  json: any;
  verified: boolean;
}

export interface HttpReceiver {
  url: string;
  port: number;
  /** Every request, verified or not, in arrival order. */
  requests: Received[];
  /** Verified (or, without a secret, JSON) requests that were answered 2xx. */
  accepted: Received[];
  /** The status the next requests get (default 200), and an optional Retry-After. */
  answer: { status: number; retryAfter?: string };
  close(): Promise<void>;
}

/** An HTTP receiver on 127.0.0.1; with `secret`, each request must verify as a Standard Webhook. */
export async function startReceiver(secret?: string | Uint8Array, port = 0): Promise<HttpReceiver> {
  const verifier = secret === undefined ? undefined : typeof secret === 'string' ? new Webhook(secret) : new Webhook(secret as never, { format: 'raw' });
  const receiver: Omit<HttpReceiver, 'url' | 'port' | 'close'> = { requests: [], accepted: [], answer: { status: 200 } };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      let verified = false;
      try {
        json = verifier ? verifier.verify(body, req.headers as Record<string, string>) : JSON.parse(body);
        verified = true;
      } catch {
        json = undefined;
      }
      const received = { headers: req.headers, body, json, verified };
      receiver.requests.push(received);
      const { status, retryAfter } = receiver.answer;
      if (verified && status >= 200 && status < 300) receiver.accepted.push(received);
      res.writeHead(verified ? status : 400, retryAfter ? { 'retry-after': retryAfter } : {});
      res.end(verified ? 'ok' : 'signature did not verify');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${bound}/hook`,
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

/** Polls `done` (it may be async) every 50 ms until it holds or `ms` passed; returns whether it held. */
export async function waitFor(done: () => boolean | Promise<boolean>, ms = 20_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await done()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return done();
}

/** A port nothing listens on (yet): bound and released at once. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
