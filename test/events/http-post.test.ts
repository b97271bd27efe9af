// postJson against real receivers on 127.0.0.1: any HTTP status resolves, a hostile receiver
// (silent, redirecting, endless body) costs at most the deadline and 64 KiB, and no error names
// the URL or a header value.
import t, { type Test } from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { deliveryErrorFor, parseRetryAfter, postJson } from '../../plugins/events/http-post.js';
import { DeliveryError } from '../../plugins/events/types.js';

const SECRET = 's3cret-token';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

async function receiver(t: Test, answer: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      answer(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const { port } = server.address() as AddressInfo;
  return { port, url: `http://127.0.0.1:${port}/hook?token=${SECRET}`, received };
}

async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function deliveryError(promise: Promise<unknown>): Promise<DeliveryError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DeliveryError) return error;
    throw error;
  }
  throw new Error('expected a DeliveryError');
}

function assertNoSecrets(t: Test, error: DeliveryError, url: string) {
  for (const text of [error.message, error.stack ?? '']) {
    t.notOk(text.includes(SECRET), 'no secret in the error');
    t.notOk(text.includes(url), 'no URL in the error');
    t.notOk(text.includes('127.0.0.1'), 'no address in the error');
  }
}

t.test('a 2xx resolves with the status; the receiver gets a JSON POST with our headers', async (t) => {
  const { url, received } = await receiver(t, (_req, res) => res.writeHead(204).end());
  const body = JSON.stringify({ type: 'test.ping', timestamp: new Date().toISOString(), data: { n: 1 } });
  const result = await postJson(url, body, { headers: { 'Webhook-Id': 'msg_1', authorization: `Bearer ${SECRET}` }, timeoutMs: 5000, guard: false });
  t.equal(result.statusCode, 204);
  t.type(result.latencyMs, 'number');
  t.notOk('retryAfterMs' in result, 'no Retry-After, no retryAfterMs');
  t.equal(received.length, 1);
  const [request] = received as [Received];
  t.equal(request.method, 'POST');
  t.equal(request.url, `/hook?token=${SECRET}`);
  t.equal(request.body, body);
  t.equal(request.headers['content-type'], 'application/json');
  t.equal(request.headers['content-length'], String(Buffer.byteLength(body)));
  t.equal(request.headers['user-agent'], 'modelgate-webhooks');
  t.equal(request.headers['webhook-id'], 'msg_1');
  t.equal(request.headers.authorization, `Bearer ${SECRET}`);
});

t.test('a caller cannot replace the content type', async (t) => {
  const { url, received } = await receiver(t, (_req, res) => res.end('ok'));
  await postJson(url, '{}', { headers: { 'Content-Type': 'text/plain' }, timeoutMs: 5000, guard: false });
  t.equal(received[0]!.headers['content-type'], 'application/json');
});

t.test('410 resolves; its DeliveryError says the endpoint is gone', async (t) => {
  const { url } = await receiver(t, (_req, res) => res.writeHead(410).end('gone'));
  const result = await postJson(url, '{}', { timeoutMs: 5000, guard: false });
  t.equal(result.statusCode, 410);
  const error = deliveryErrorFor(result);
  t.ok(error instanceof DeliveryError);
  t.match(error, { message: 'HTTP 410', statusCode: 410, gone: true });
});

t.test('429 with Retry-After in seconds, and as an HTTP date, is carried to the DeliveryError', async (t) => {
  const seconds = await receiver(t, (_req, res) => res.writeHead(429, { 'retry-after': '120' }).end());
  const bySeconds = await postJson(seconds.url, '{}', { timeoutMs: 5000, guard: false });
  t.equal(bySeconds.statusCode, 429);
  t.equal(bySeconds.retryAfterMs, 120_000);
  t.match(deliveryErrorFor(bySeconds), { message: 'HTTP 429', statusCode: 429, retryAfterMs: 120_000, gone: false });

  const date = await receiver(t, (_req, res) => res.writeHead(429, { 'retry-after': new Date(Date.now() + 30_000).toUTCString() }).end());
  const byDate = await postJson(date.url, '{}', { timeoutMs: 5000, guard: false });
  t.ok(byDate.retryAfterMs! > 28_000 && byDate.retryAfterMs! <= 30_000, `about 30 s (${byDate.retryAfterMs})`);
});

t.test('Retry-After is clamped to [0, 1 h] and ignored when unreadable', async (t) => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  t.equal(parseRetryAfter('0', now), 0);
  t.equal(parseRetryAfter(' 5 ', now), 5000);
  t.equal(parseRetryAfter('999999', now), 3_600_000);
  t.equal(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now), 0, 'a date in the past');
  t.equal(parseRetryAfter('Thu, 01 Jan 2026 00:00:10 GMT', now), 10_000);
  t.equal(parseRetryAfter('Fri, 02 Jan 2026 00:00:00 GMT', now), 3_600_000);
  t.equal(parseRetryAfter('-5', now), undefined);
  t.equal(parseRetryAfter('soon', now), undefined);
  t.equal(parseRetryAfter(undefined, now), undefined);
});

t.test('503 gives a plain HTTP 503 DeliveryError', async (t) => {
  const { url } = await receiver(t, (_req, res) => res.writeHead(503).end());
  t.match(deliveryErrorFor(await postJson(url, '{}', { timeoutMs: 5000, guard: false })), { message: 'HTTP 503', statusCode: 503, gone: false, retryAfterMs: undefined });
});

t.test('a redirect is not followed: the 3xx is the result', async (t) => {
  const { url, port, received } = await receiver(t, (req, res) => {
    if (req.url!.startsWith('/hook')) res.writeHead(307, { location: `http://127.0.0.1:${port}/elsewhere` }).end();
    else res.writeHead(200).end();
  });
  const result = await postJson(url, '{}', { timeoutMs: 5000, guard: false });
  t.equal(result.statusCode, 307);
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.same(
    received.map((r) => r.url),
    [`/hook?token=${SECRET}`],
    'the Location was never requested',
  );
});

t.test('a receiver that never answers times out at the deadline', async (t) => {
  let closed = false;
  const { url } = await receiver(t, (req) => req.socket.on('close', () => (closed = true)));
  const started = Date.now();
  const error = await deliveryError(postJson(url, '{}', { headers: { authorization: `Bearer ${SECRET}` }, timeoutMs: 300, guard: false }));
  const waited = Date.now() - started;
  t.equal(error.message, 'timed out after 300 ms');
  t.equal(error.statusCode, null);
  t.ok(waited >= 290 && waited < 2000, `waited ${waited} ms`);
  t.ok(error.latencyMs >= 290);
  assertNoSecrets(t, error, url);
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.ok(closed, 'the connection was dropped');
});

t.test('a receiver that sends headers slowly is bounded too', async (t) => {
  const { url } = await receiver(t, (_req, res) => setTimeout(() => res.writeHead(200).end(), 2000).unref());
  const error = await deliveryError(postJson(url, '{}', { timeoutMs: 200, guard: false }));
  t.equal(error.message, 'timed out after 200 ms');
});

t.test('a huge response body is not read past 64 KiB: the connection is dropped', async (t) => {
  let written = 0;
  let receiverClosed!: () => void;
  const closed = new Promise<void>((resolve) => (receiverClosed = resolve));
  const { url } = await receiver(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.on('close', receiverClosed);
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const pump = () => {
      while (written < 512 * 1024 * 1024) {
        written += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  });
  const result = await postJson(url, '{}', { timeoutMs: 10_000, guard: false });
  t.equal(result.statusCode, 200, 'the status is reported');
  await closed;
  t.ok(written < 64 * 1024 * 1024, `the receiver stopped after ${written} bytes`);
});

t.test('a status followed by a body that never ends still resolves with the status', async (t) => {
  let closed = false;
  const { url } = await receiver(t, (_req, res) => {
    res.writeHead(202);
    res.write('partial');
    res.on('close', () => (closed = true));
  });
  const result = await postJson(url, '{}', { timeoutMs: 300, guard: false });
  t.equal(result.statusCode, 202);
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.ok(closed, 'the deadline still drops the connection');
});

t.test('connection refused', async (t) => {
  const url = `http://127.0.0.1:${await closedPort()}/hook?token=${SECRET}`;
  const error = await deliveryError(postJson(url, '{}', { timeoutMs: 5000, guard: false }));
  t.match(error, { message: 'connection refused', statusCode: null, gone: false });
  assertNoSecrets(t, error, url);
});

t.test('guard:true refuses a loopback literal and a name resolving to loopback; guard:false allows them', async (t) => {
  const { port, url, received } = await receiver(t, (_req, res) => res.writeHead(200).end());
  const literal = await deliveryError(postJson(url, '{}', { headers: { authorization: `Bearer ${SECRET}` }, timeoutMs: 5000, guard: true }));
  t.match(literal, { message: 'address blocked: loopback', statusCode: null });
  assertNoSecrets(t, literal, url);

  const named = `http://localhost:${port}/hook?token=${SECRET}`;
  const byName = await deliveryError(postJson(named, '{}', { timeoutMs: 5000, guard: true }));
  t.match(byName, { message: 'address blocked: loopback' }, 'refused at connect time by guardedLookup');
  t.notOk(byName.message.includes(SECRET));
  t.notOk(byName.message.includes('localhost'));

  const mapped = await deliveryError(postJson(`http://[::ffff:127.0.0.1]:${port}/`, '{}', { timeoutMs: 5000, guard: true }));
  t.equal(mapped.message, 'address blocked: loopback', 'IPv4-mapped literal');
  t.equal(received.length, 0, 'nothing reached the receiver');

  t.equal((await postJson(url, '{}', { timeoutMs: 5000, guard: false })).statusCode, 200);
  t.equal(received.length, 1);
});

t.test('a header value that cannot be sent is refused without quoting it', async (t) => {
  const { url } = await receiver(t, (_req, res) => res.end());
  const error = await deliveryError(postJson(url, '{}', { headers: { 'x-token': `${SECRET}\r\nx-evil: 1` }, timeoutMs: 5000, guard: false }));
  t.equal(error.message, 'invalid request header');
  assertNoSecrets(t, error, url);
});

t.test('a URL that is not http(s) or not a URL at all is refused without echoing it', async (t) => {
  t.equal((await deliveryError(postJson(`ftp://example.com/?token=${SECRET}`, '{}', { timeoutMs: 1000, guard: false }))).message, 'unsupported protocol');
  t.equal((await deliveryError(postJson(`not a url ${SECRET}`, '{}', { timeoutMs: 1000, guard: false }))).message, 'invalid URL');
});
