// The forwarding path against one fake OpenAI provider: what the upstream sends that the gateway
// must cope with (compressed streams), and what it must not let break a response after the
// upstream was called (header values it cannot write as they are).
import t from 'tap';
import { createGzip, constants, gzipSync } from 'node:zlib';
import { startGateway, call, GATEWAY_KEY, type TestGateway } from '../helpers/gateway.js';
import { PROVIDER_KEYS, openAIResponder } from '../helpers/fakes.js';
import { FakeProvider, fixture, fixtureJson, json, sleep, sse, write, type Responder } from '../helpers/fake-provider.js';
import { testCatalog } from '../helpers/money.js';
import { watchListenerLeaks } from '../helpers/warnings.js';

let upstream: FakeProvider;
const catalog = testCatalog();

t.before(async () => {
  upstream = await FakeProvider.start(openAIResponder(PROVIDER_KEYS.openai));
});
t.after(() => upstream.close());
t.beforeEach(() => upstream.reset());

async function withGateway(extra: Record<string, string>, fn: (gateway: TestGateway) => Promise<void>): Promise<void> {
  const gateway = await startGateway({
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_MODEL_CATALOG: catalog,
    MODELGATE_CACHE_ENABLED: 'false',
    MODELGATE_RETRIES: '0',
    ...extra,
  });
  try {
    await fn(gateway);
  } finally {
    await gateway.close();
  }
}

async function until(what: () => boolean | Promise<boolean>, tries = 250): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (await Promise.resolve().then(what).catch(() => false)) return true;
    await sleep(20);
  }
  return false;
}

const streamBody = JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'What is the capital of France?' }] });

/** The stream fixture gzip-encoded (ignoring accept-encoding: identity), flushed per event; hangs after `stopAfter` events. */
function gzippedSse(stopAfter: number): Responder {
  const events = fixture('openai/stream.sse').split('\n\n').filter(Boolean).map((event) => `${event}\n\n`);
  return async (_request, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
    const gzip = createGzip();
    gzip.pipe(res);
    for (const event of events.slice(0, stopAfter)) {
      gzip.write(event);
      await new Promise<void>((resolve) => gzip.flush(constants.Z_SYNC_FLUSH, () => resolve()));
    }
    // hang: the connection stays open, the gzip stream never ends
  };
}

t.test('a gzip-encoded completion is decoded', async (t) => {
  upstream.next((_request, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    res.end(gzipSync(fixture('openai/chat.json')));
  });
  await withGateway({}, async (gateway) => {
    const reply = await gateway.client().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'What is the capital of France?' }] });
    t.equal(reply.choices[0]!.message.content, 'The capital of France is Paris.');
  });
});

t.test('a gzip-encoded stream: the client that leaves closes the upstream and the request finishes', async (t) => {
  upstream.next(gzippedSse(2));
  await withGateway({ MODELGATE_TIMEOUT: '60000' }, async (gateway) => {
    const controller = new AbortController();
    const response = await fetch(`${gateway.url}/chat/completions`, {
      method: 'POST',
      signal: controller.signal,
      headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' },
      body: streamBody,
    });
    t.equal(response.status, 200);
    const reader = response.body!.getReader();
    let seen = '';
    while (!seen.includes('The')) seen += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    t.ok(await until(() => upstream.aborted === 1), 'the upstream request was closed');
    // The cost guard settles only when the failover step returns: the reservation going back to 0
    // and the request counted show that the request finished.
    const finished = await until(async () => {
      const day = (await call(gateway.url, '/usage')).json.budgets.day;
      return day.reserved_usd === 0 && day.requests === 1;
    });
    t.ok(finished, 'the request finished (its reservation settled)');
  });
});

t.test('a gzip-encoded stream that goes idle past MODELGATE_TIMEOUT ends with the error event', async (t) => {
  upstream.next(gzippedSse(2));
  await withGateway({ MODELGATE_TIMEOUT: '300' }, async (gateway) => {
    const response = await fetch(`${gateway.url}/chat/completions`, {
      method: 'POST',
      // A bound for the test only: without the fix the stream never ends.
      signal: AbortSignal.timeout(20_000),
      headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' },
      body: streamBody,
    });
    const text = await response.text().catch((error: Error) => `(not ended: ${error.message})`);
    const events = text.split('\n\n').filter((event) => event.startsWith('data: {')).map((event) => JSON.parse(event.slice(6)));
    t.equal(events.filter((event) => event.choices).map((event) => event.choices[0]?.delta?.content ?? '').join(''), 'The', 'the content before the gap reached the client');
    t.match(events.at(-1), { error: { code: 'upstream_timeout' } }, 'then the error event');
    t.ok(await until(() => upstream.aborted === 1), 'the upstream request was closed');
  });
});

t.test('a model id that is not printable ASCII is percent-encoded in the response headers', async (t) => {
  const polling = { MODELGATE_RATE_LIMITING_ENABLED: 'false' };
  await withGateway({ ...polling, MODELGATE_ALLOW_UNPRICED_MODELS: 'true', CUSTOM_BASE_URL: `${upstream.url}/v1` }, async (gateway) => {
    upstream.next(json(200, fixtureJson('openai/chat.json')));
    const plain = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ model: 'custom/模型', messages: [{ role: 'user', content: 'hi' }] }) });
    t.equal(plain.status, 200);
    t.equal(plain.json.choices[0].message.content, 'The capital of France is Paris.');
    t.equal(plain.headers.get('x-modelgate-model'), '%E6%A8%A1%E5%9E%8B');
    t.equal(decodeURIComponent(plain.headers.get('x-modelgate-model')!), '模型');
    t.equal(plain.headers.get('x-modelgate-provider'), 'custom', 'plain values are left as they are');

    upstream.next(sse(fixture('openai/stream.sse')));
    const streamed = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ model: 'custom/模型', stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
    t.equal(streamed.status, 200);
    t.equal(streamed.headers.get('x-modelgate-model'), '%E6%A8%A1%E5%9E%8B');
    const text = streamed.text.split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)).choices?.[0]?.delta?.content ?? '').join('');
    t.equal(text, 'The capital of France is Paris.');
    t.match(streamed.text, /data: \[DONE\]/);
  });
});

t.test('a stream line beyond the SSE limit (16 Mi characters) is a bad response, not unbounded memory', async (t) => {
  // The fake writes 17 MiB against backpressure: each wait for 'drain' must leave no listener behind.
  const leaks = watchListenerLeaks();
  upstream.next(async (_request, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const piece = 'x'.repeat(1024 * 1024);
    res.write('data: {"id":"');
    for (let i = 0; i < 17 && !res.destroyed; i++) await write(res, piece);
    // and never a line break
  });
  await withGateway({ MODELGATE_TIMEOUT: '60000' }, async (gateway) => {
    const refused = await call(gateway.url, '/chat/completions', { body: streamBody });
    t.equal(refused.status, 503);
    t.ok(await until(() => upstream.aborted === 1), 'the upstream stream was closed');
    const openai = (await call(gateway.url, '/providers/status')).json.data.find((p: { provider: string }) => p.provider === 'openai');
    t.match(openai.last_error, { reason: 'bad_response', message: /larger than 16777216 characters/ });
  });
  t.same(await leaks(), [], 'no MaxListenersExceededWarning from the fake or the gateway');
});

t.end();
