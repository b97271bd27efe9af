// Requests Node's HTTP parser refuses get OpenAI's error body, not Node's bare 400, and their
// connection closes; a request that was fine keeps its answer.
import t from 'tap';
import { startGateway, GATEWAY_KEY } from '../helpers/gateway.js';
import { checkError } from '../helpers/schema.js';
import { exchange } from '../fuzz/wire.js';

const refused: Array<[string, string, number]> = [
  ['an unknown method', 'BREW /v1/models HTTP/1.1\r\nhost: x\r\n\r\n', 400],
  ['two Content-Lengths that disagree', `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${GATEWAY_KEY}\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\n{}{}{}`, 400],
  ['Content-Length and chunked together', 'POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n', 400],
  ['a negative Content-Length', 'POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: -1\r\n\r\n', 400],
  ['a chunk size that is not hex', 'POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n', 400],
  ['a control character in a header', 'GET /v1/models HTTP/1.1\r\nhost: x\r\nx-modelgate-strategy: a\u0001b\r\n\r\n', 400],
  ['a NUL in the path', 'GET /v1/models\u0000 HTTP/1.1\r\nhost: x\r\n\r\n', 400],
  ['20 KB of headers', `GET /v1/models HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
  ['a body cut short by the client', `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${GATEWAY_KEY}\r\ncontent-length: 100\r\n\r\n{"model":`, 400],
];

t.test('a request the HTTP parser refuses gets an OpenAI error and a closed connection', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const port = Number(new URL(gateway.url).port);
  for (const [what, raw, status] of refused) {
    const result = await exchange(port, [{ write: Buffer.from(raw, 'latin1') }, { pause: 30 }, { end: true }], { expect: 1, timeoutMs: 5000, watchCloseMs: 2000 });
    const response = result.responses[0];
    t.equal(response?.status, status, `${what}: ${status}`);
    t.match(response?.headers['content-type']?.[0], /^application\/json/, `${what}: JSON`);
    let body: unknown;
    try {
      body = JSON.parse(response?.body.toString('utf8') ?? '');
    } catch {
      body = undefined;
    }
    t.equal(checkError(body), null, `${what}: OpenAI's error body`);
    t.ok(result.closedByServer, `${what}: the connection is closed`);
  }
});

t.test('a request before the malformed one on the same connection is still answered', async (t) => {
  const gateway = await startGateway();
  t.teardown(() => gateway.close());
  const port = Number(new URL(gateway.url).port);
  const good = `GET /v1/models HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${GATEWAY_KEY}\r\n\r\n`;
  const result = await exchange(port, [{ write: Buffer.from(good, 'latin1') }, { pause: 200 }, { write: Buffer.from('BREW / HTTP/1.1\r\n\r\n', 'latin1') }], { expect: 2, timeoutMs: 5000, watchCloseMs: 2000 });
  t.equal(result.responses[0]?.status, 200, 'the first request is answered');
  // The first response is complete, so the malformed request after it gets its own answer (as
  // Node's default handler would, with a body here), and then the connection closes.
  t.equal(result.responses[1]?.status, 400, 'the malformed one gets its 400');
  t.equal(result.responses.length, 2);
  t.ok(result.closedByServer);
});
