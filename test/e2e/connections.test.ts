// Connections under attack, through the real server on raw sockets: a refused request's endless body
// is not read, a stalled body and trickling headers are cut in seconds, connections past the cap are
// told 503 while health checks and later good requests pass, what Node's parser refuses still gets
// OpenAI's error body — and none of these bounds cuts a long streamed answer.
import t, { type Test } from 'tap';
import type { Socket } from 'node:net';
import { startGateway, GATEWAY_KEY, PROTOCOL_ONLY, call } from '../helpers/gateway.js';
import { startFakeOpenAI, openAIResponder, PROVIDER_KEYS } from '../helpers/fakes.js';
import { fixture, sse, sleep, type FakeProvider } from '../helpers/fake-provider.js';
import { exchange, openIdle, portOf } from '../helpers/raw-http.js';
import { openFilesLimit } from '../../core/connections.js';

let upstream: FakeProvider;
t.before(async () => {
  upstream = await startFakeOpenAI();
});
t.after(() => upstream.close());

const provider = () => ({ ...PROTOCOL_ONLY, OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1` });

const chatHead = (key: string, framing: string) =>
  `POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`;

/** The OpenAI error body: {"error":{"message","type","param","code"}}. */
function isOpenAIError(t: Test, json: any, code: string): void {
  t.match(json, { error: { message: String, type: String, code } }, `an OpenAI error body with code ${code}`);
  t.ok(json && 'param' in json.error, 'with a param field');
}

t.test('a refused request with a never-ending chunked body is answered and its connection closed within a second', async (t) => {
  const gateway = await startGateway(provider());
  t.teardown(() => gateway.close());
  upstream.reset();
  const answer = await exchange(portOf(gateway.url), {
    send: `${chatHead('uc_wrong_key_0000000000', 'Transfer-Encoding: chunked')}5\r\n{"mod\r\n`,
    drip: { chunk: '5\r\nxxxxx\r\n', everyMs: 20 },
    deadlineMs: 5000,
  });
  t.equal(answer.status, 401);
  isOpenAIError(t, answer.json, 'invalid_api_key');
  t.equal(answer.headers.connection, 'close', 'the answer says the connection closes');
  t.ok(answer.closedAfterMs !== undefined && answer.closedAfterMs < 1500, `closed after ${answer.closedAfterMs?.toFixed(0)} ms, not when the body ends`);
  t.equal(upstream.requests.length, 0);
});

t.test('a body that stalls mid-way is cut by MODELGATE_BODY_IDLE_TIMEOUT: 408, OpenAI-shaped, no upstream call', async (t) => {
  const gateway = await startGateway({ ...provider(), MODELGATE_BODY_IDLE_TIMEOUT: '300' });
  t.teardown(() => gateway.close());
  upstream.reset();
  const answer = await exchange(portOf(gateway.url), {
    send: `${chatHead(GATEWAY_KEY, 'Content-Length: 1000')}{"model":"gpt-4o-mini",`,
    deadlineMs: 5000,
  });
  t.equal(answer.status, 408);
  isOpenAIError(t, answer.json, 'request_timeout');
  t.match(answer.json.error.message, /MODELGATE_BODY_IDLE_TIMEOUT/);
  t.equal(answer.headers.connection, 'close');
  t.ok(answer.closedAfterMs !== undefined && answer.closedAfterMs < 2000, `closed after ${answer.closedAfterMs?.toFixed(0)} ms`);
  t.equal(upstream.requests.length, 0, 'the provider was not called');
});

t.test('a body that trickles in just fast enough for the idle timeout is cut by MODELGATE_REQUEST_TIMEOUT: 408, no upstream call', async (t) => {
  const gateway = await startGateway({ ...provider(), MODELGATE_HEADERS_TIMEOUT: '1000', MODELGATE_REQUEST_TIMEOUT: '1000', MODELGATE_BODY_IDLE_TIMEOUT: '500' });
  t.teardown(() => gateway.close());
  upstream.reset();
  const answer = await exchange(portOf(gateway.url), {
    send: `${chatHead(GATEWAY_KEY, 'Content-Length: 100000')}{"model":"gpt-4o-mini",`,
    drip: { chunk: ' ', everyMs: 100 },
    deadlineMs: 6000,
  });
  t.equal(answer.status, 408);
  isOpenAIError(t, answer.json, 'request_timeout');
  t.match(answer.json.error.message, /MODELGATE_REQUEST_TIMEOUT/);
  t.ok(answer.closedAfterMs !== undefined && answer.closedAfterMs < 3500, `closed after ${answer.closedAfterMs?.toFixed(0)} ms`);
  t.equal(upstream.requests.length, 0, 'the provider was not called');
});

t.test('headers that trickle in (slowloris) are cut by MODELGATE_HEADERS_TIMEOUT with a 408 body', async (t) => {
  const gateway = await startGateway({ ...provider(), MODELGATE_HEADERS_TIMEOUT: '1000', MODELGATE_REQUEST_TIMEOUT: '5000' });
  t.teardown(() => gateway.close());
  const answer = await exchange(portOf(gateway.url), {
    send: 'GET /v1/health HTTP/1.1\r\nHost: gateway\r\n',
    drip: { chunk: 'X-Slow: 1\r\n', everyMs: 200 },
    deadlineMs: 8000,
  });
  t.equal(answer.status, 408);
  isOpenAIError(t, answer.json, 'request_timeout');
  // The timeout is checked once a second: 1 s, plus at most one interval, plus the linger.
  t.ok(answer.closedAfterMs !== undefined && answer.closedAfterMs < 3500, `closed after ${answer.closedAfterMs?.toFixed(0)} ms`);
});

t.test('connections past MODELGATE_MAX_CONNECTIONS get 503 too_many_connections, health still answers, and a good request passes once they are gone', async (t) => {
  const gateway = await startGateway({ ...provider(), MODELGATE_MAX_CONNECTIONS: '2' });
  t.teardown(() => gateway.close());
  const port = portOf(gateway.url);
  const held = [await openIdle(port), await openIdle(port)];
  t.teardown(() => held.forEach((socket) => socket.destroy()));
  await sleep(50); // the server has counted them

  const refused = await exchange(port, { send: 'GET /v1/models HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ' + GATEWAY_KEY + '\r\n\r\n', deadlineMs: 3000 });
  t.equal(refused.status, 503);
  isOpenAIError(t, refused.json, 'too_many_connections');
  t.equal(refused.headers['retry-after'], '1');
  t.equal(refused.headers.connection, 'close');
  t.ok(refused.closedAfterMs !== undefined, 'and the connection is closed');

  const health = await exchange(port, { send: 'GET /v1/health HTTP/1.1\r\nHost: gateway\r\n\r\n', deadlineMs: 3000 });
  t.equal(health.status, 200, 'a load balancer still sees the gateway alive');
  t.equal(health.headers.connection, 'close');

  for (const socket of held) socket.destroy();
  await sleep(50);
  const good = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }) });
  t.equal(good.status, 200, 'a good request succeeds once the connections are gone');
});

t.test('past MODELGATE_MAX_CONNECTIONS_PER_IP an address\'s connections are closed at accept, uncounted: another address is served though the first holds many', async (t) => {
  const gateway = await startGateway({ ...provider(), MODELGATE_MAX_CONNECTIONS: '4', MODELGATE_MAX_CONNECTIONS_PER_IP: '2' });
  t.teardown(() => gateway.close());
  const port = portOf(gateway.url);
  const models = 'GET /v1/models HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ' + GATEWAY_KEY + '\r\n\r\n';
  // One address tries to hold ten idle connections, more than the whole cap of 4.
  const held = await Promise.all(Array.from({ length: 10 }, () => openIdle(port, '127.0.0.2').catch(() => undefined)));
  t.teardown(() => held.forEach((socket) => socket?.destroy()));
  await sleep(100);

  const refused = await exchange(port, { send: models, deadlineMs: 3000, from: '127.0.0.2' });
  t.equal(refused.status, 0, 'a further connection from that address is closed unanswered');
  t.ok(refused.closedAfterMs !== undefined && refused.closedAfterMs < 1000, 'at once');

  const other = await exchange(port, { send: models, deadlineMs: 3000, from: '127.0.0.3' });
  t.equal(other.status, 200, 'another address is served: the first holds 2 places of 4, not all of them');

  for (const socket of held) socket?.destroy();
  await sleep(100);
  const again = await exchange(port, { send: models, deadlineMs: 3000, from: '127.0.0.2' });
  t.equal(again.status, 200, 'the address is served once its connections closed: its count went back down');
});

t.test('past MODELGATE_MAX_CONNECTIONS and its 64 extra, new connections are closed at accept', async (t) => {
  const gateway = await startGateway({ ...provider(), MODELGATE_MAX_CONNECTIONS: '1' });
  t.teardown(() => gateway.close());
  const port = portOf(gateway.url);
  const held: Socket[] = [];
  for (let i = 0; i < 1 + 64; i++) held.push(await openIdle(port));
  t.teardown(() => held.forEach((socket) => socket.destroy()));
  await sleep(50);
  const dropped = await exchange(port, { send: 'GET /v1/health HTTP/1.1\r\nHost: gateway\r\n\r\n', deadlineMs: 3000 });
  t.equal(dropped.status, 0, 'no answer');
  t.ok(dropped.closedAfterMs !== undefined && dropped.closedAfterMs < 1000, 'the connection is closed at once');
  held.pop()!.destroy();
  await sleep(50);
  const health = await exchange(port, { send: 'GET /v1/health HTTP/1.1\r\nHost: gateway\r\n\r\n', deadlineMs: 3000 });
  t.equal(health.status, 200, 'with a place free among the extra 64, the health check is answered again');
});

t.test("what Node's parser refuses gets OpenAI's error body and Connection: close", async (t) => {
  const gateway = await startGateway(provider());
  t.teardown(() => gateway.close());
  const port = portOf(gateway.url);

  const malformed = await exchange(port, { send: 'NOT AN HTTP REQUEST\r\n\r\n', deadlineMs: 3000 });
  t.equal(malformed.status, 400, 'a malformed request line');
  isOpenAIError(t, malformed.json, 'invalid_request');
  t.equal(malformed.headers.connection, 'close');

  const huge = await exchange(port, { send: `GET /v1/health HTTP/1.1\r\nHost: gateway\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, deadlineMs: 3000 });
  t.equal(huge.status, 431, 'headers over 16 KB');
  isOpenAIError(t, huge.json, 'headers_too_large');

  const tunnel = await exchange(port, { send: 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', deadlineMs: 3000 });
  t.equal(tunnel.status, 405, 'CONNECT');
  isOpenAIError(t, tunnel.json, 'method_not_allowed');
  t.ok(tunnel.closedAfterMs !== undefined, 'its connection is closed');

  const expect = await exchange(port, { send: `${chatHead(GATEWAY_KEY, 'Content-Length: 10\r\nExpect: 200-ok')}`, deadlineMs: 3000 });
  t.equal(expect.status, 417, 'an Expect other than 100-continue');
  isOpenAIError(t, expect.json, 'expectation_failed');
  for (const [name, answer] of Object.entries({ malformed, huge, tunnel, expect })) t.match(answer.headers['x-request-id'], /^[0-9a-f-]{36}$/, `${name}: an x-request-id`);
});

t.test('an answer that takes longer than every request timeout to start is not cut', async (t) => {
  const gateway = await startGateway({ ...provider(), MODELGATE_HEADERS_TIMEOUT: '1000', MODELGATE_REQUEST_TIMEOUT: '1000', MODELGATE_BODY_IDLE_TIMEOUT: '300' });
  t.teardown(() => gateway.close());
  upstream.reset();
  // A provider that thinks for 2.5 s before its first byte (a reasoning model, say).
  upstream.next(async (request, res) => {
    await sleep(2500);
    return openAIResponder()(request, res);
  });
  const answer = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }) });
  t.equal(answer.status, 200);
  t.equal(answer.json.choices[0].message.content, 'The capital of France is Paris.');
});

const files = openFilesLimit();
t.test('a connection cap too high for the open-files limit is warned about at boot', { skip: files === undefined && 'this system does not tell its open-files limit' }, async (t) => {
  if (files === undefined) return;
  const gateway = await startGateway({ ...provider(), MODELGATE_MAX_CONNECTIONS: String(files) });
  t.teardown(() => gateway.close());
  const warning = gateway.logs.find((line) => line.maxConnections === files);
  t.ok(warning, 'a warning names the setting');
  t.match(String(warning?.msg), /MODELGATE_MAX_CONNECTIONS is too high for the open-files limit/);
  const sane = await startGateway({ ...provider(), MODELGATE_MAX_CONNECTIONS: String(Math.floor(files / 2) - 64) });
  t.teardown(() => sane.close());
  t.notOk(sane.logs.some((line) => /open-files limit/.test(String(line.msg))), 'none at exactly half the limit');
});

t.test('a header timeout longer than the whole-request timeout stops the boot, naming both settings', async (t) => {
  await t.rejects(startGateway({ ...provider(), MODELGATE_HEADERS_TIMEOUT: '20000', MODELGATE_REQUEST_TIMEOUT: '10000' }), {
    name: 'ConfigError',
    message: /MODELGATE_HEADERS_TIMEOUT: must not exceed MODELGATE_REQUEST_TIMEOUT \(10000\)/,
  });
});

t.test('a streamed answer longer than every request timeout is not cut', async (t) => {
  const gateway = await startGateway({
    ...provider(),
    MODELGATE_HEADERS_TIMEOUT: '1000',
    MODELGATE_REQUEST_TIMEOUT: '1000',
    MODELGATE_BODY_IDLE_TIMEOUT: '300',
    MODELGATE_TIMEOUT: '30000',
  });
  t.teardown(() => gateway.close());
  upstream.reset();
  // 8 events 450 ms apart: about 3.5 s, over the 1 s request timeout plus its 1 s check interval.
  upstream.next(sse(fixture('openai/stream.sse'), { delayMs: 450 }));
  const started = performance.now();
  const stream = await gateway.client().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  const tookMs = performance.now() - started;
  t.equal(text, 'The capital of France is Paris.', 'the whole answer arrived');
  t.ok(tookMs > 2500, `it lasted ${tookMs.toFixed(0)} ms, past the timeouts`);
});

// Listening servers keep the event loop alive: end the root test explicitly so t.after runs.
t.end();
