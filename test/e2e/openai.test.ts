// End to end: the real gateway, the real OpenAI SDK as client, a fake OpenAI upstream replaying
// the golden fixtures.
import t from 'tap';
import type OpenAI from 'openai';
import { startGateway, call, GATEWAY_KEY, type TestGateway, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { fixtureJson, json, sse, fixture, sleep, type FakeProvider } from '../helpers/fake-provider.js';
import { checkChunk, checkCompletion, checkError, checkModelList } from '../helpers/schema.js';

let upstream: FakeProvider;
let gateway: TestGateway;

t.before(async () => {
  upstream = await startFakeOpenAI();
  // One attempt, no breaker, no cache: these tests are about forwarding — every request must reach the
  // upstream (retries: test/e2e/failover.test.ts; the cache: test/plugins/cache*.test.ts).
  gateway = await startGateway({
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    ...PROTOCOL_ONLY,
  });
});
t.after(async () => {
  await gateway.close();
  await upstream.close();
});
t.beforeEach(() => upstream.reset());

// The canonical request, typed as the SDK's parameters (the fixture's own `stream` is overridden per test).
const request: Omit<OpenAI.ChatCompletionCreateParamsNonStreaming, 'stream'> = fixtureJson('openai/request.json');

t.test('a non-stream completion comes back as the provider sent it, schema-valid', async (t) => {
  const { data, response } = await gateway.client().chat.completions.create({ ...request, stream: false }).withResponse();
  t.equal(checkCompletion(data), null);
  t.equal(data.choices[0]!.message.content, 'The capital of France is Paris.');
  t.same(data.usage, fixtureJson('openai/chat.json').usage);
  t.equal(response.headers.get('x-modelgate-provider'), 'openai');
  t.equal(response.headers.get('x-modelgate-model'), 'gpt-4o-mini');
  t.equal(response.headers.get('x-modelgate-attempts'), '1');
  // 24 prompt tokens at $0.15/M + 8 completion tokens at $0.60/M
  t.equal(Number(response.headers.get('x-modelgate-cost')), 24 * 1.5e-7 + 8 * 6e-7);
  t.match(response.headers.get('x-request-id'), /^[0-9a-f-]{36}$/);
});

/** The fixture's completion as text: OpenAI's shape, with what JSON.stringify would write differently (spacing, a number's form, an extra field). */
const asWritten = () => {
  const fixture = JSON.stringify(fixtureJson('openai/chat.json'));
  return `{"provider_note" :  {"weight": 1.50, "big": 1e2},${fixture.slice(1)}`;
};

t.test('a completion the adapter leaves as it is reaches the client byte for byte', async (t) => {
  const raw = asWritten();
  upstream.next(json(200, raw));
  const answer = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ ...request, stream: false }) });
  t.equal(answer.status, 200);
  t.equal(answer.text, raw, 'the provider\'s own bytes, not a serialization of them');
  t.equal(answer.headers.get('content-length'), String(Buffer.byteLength(raw)));
  t.equal(checkCompletion(answer.json), null);
  t.equal(Number(answer.headers.get('x-modelgate-cost')), 24 * 1.5e-7 + 8 * 6e-7, 'billed from the same answer');
});

t.test('a completion the adapter had to change, or with space around it, is written as the gateway reads it', async (t) => {
  const changed = JSON.parse(asWritten());
  changed.choices[0].finish_reason = 'model_length';
  delete changed.choices[0].logprobs;
  upstream.next(json(200, JSON.stringify(changed)));
  const fixed = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ ...request, stream: false }) });
  t.equal(fixed.json.choices[0].finish_reason, 'length');
  t.equal(fixed.json.choices[0].logprobs, null);
  t.equal(fixed.text, JSON.stringify(fixed.json), 'serialized by the gateway');
  t.equal(checkCompletion(fixed.json), null);

  // Invalid UTF-8 inside a string: the gateway read U+FFFD there, and so must the client.
  const raw = Buffer.from(asWritten());
  const at = raw.indexOf('Paris');
  const invalid = Buffer.concat([raw.subarray(0, at), Buffer.from([0xff]), raw.subarray(at)]);
  upstream.next((_request, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': invalid.length });
    res.end(invalid);
  });
  const replaced = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ ...request, stream: false }) });
  t.ok(replaced.json.choices[0].message.content.includes('\uFFFDParis'), 'U+FFFD where the byte was');
  t.equal(replaced.text, JSON.stringify(replaced.json), 'serialized by the gateway: valid UTF-8');

  const spaced = `\n${asWritten()}\n`;
  upstream.next(json(200, spaced));
  const trimmed = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ ...request, stream: false }) });
  t.equal(trimmed.text, JSON.stringify(JSON.parse(spaced)), 'serialized: an entry of the cache must start and end with its braces');
});

t.test('the upstream gets the provider key, never the client key, and only the translated body', async (t) => {
  await gateway.client().chat.completions.create({ ...request, stream: false, modelgate: { routing: {} } } as never);
  const seen = upstream.last!;
  t.equal(seen.url, '/v1/chat/completions');
  t.equal(seen.headers.authorization, `Bearer ${PROVIDER_KEYS.openai}`);
  t.notOk(JSON.stringify(seen.headers).includes(GATEWAY_KEY), 'no header carries the uc_ key');
  t.notOk(seen.body.includes(GATEWAY_KEY));
  t.notOk('modelgate' in seen.json, 'the gateway field is removed');
  t.equal(seen.json.model, 'gpt-4o-mini');
  t.equal(seen.headers.cookie, undefined);
});

t.test('cookies and hop-by-hop headers from the client are not forwarded', async (t) => {
  await call(gateway.url, '/chat/completions', {
    body: JSON.stringify(request),
    headers: { cookie: 'session=secret', 'proxy-authorization': 'Basic x', 'x-custom': 'leak', te: 'trailers' },
  });
  const seen = upstream.last!;
  t.equal(seen.headers.cookie, undefined);
  t.equal(seen.headers['proxy-authorization'], undefined);
  t.equal(seen.headers['x-custom'], undefined);
  t.equal(seen.headers.te, undefined);
});

t.test('a stream arrives chunk by chunk, every chunk schema-valid, usage only when asked', async (t) => {
  const stream = await gateway.client().chat.completions.create({ ...request, stream: true });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  t.ok(chunks.length >= 5);
  for (const chunk of chunks) t.equal(checkChunk(chunk), null);
  t.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'The capital of France is Paris.');
  t.notOk(chunks.some((c) => c.usage), 'no usage chunk when the client did not ask');
  t.same(upstream.last!.json.stream_options, { include_usage: true }, 'the upstream is always asked for usage');

  const withUsage = await gateway.client().chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
  const all = [];
  for await (const chunk of withUsage) all.push(chunk);
  const last = all.at(-1)!;
  t.same(last.choices, []);
  t.equal(last.usage?.total_tokens, 32);
});

t.test("OpenAI's chunks reach the client as OpenAI wrote them, without usage:null when usage was not asked for", async (t) => {
  // What JSON.stringify would write differently: spacing, a number's form, an escaped character.
  const texts = fixture('openai/stream.sse').split('\n\n').filter((event) => event.startsWith('data: {')).map((event) => event.slice('data: '.length));
  const written = texts.map((text, i) => (i === 1 ? text.replace('{"id"', '{"weight": 1.50, "note":"caf\\u00e9","id"') : text));
  const transcript = `${written.map((text) => `data: ${text}\n\n`).join('')}data: [DONE]\n\n`;
  const body = JSON.stringify({ ...request, stream: true });

  upstream.next(sse(transcript));
  const plain = await call(gateway.url, '/chat/completions', { body });
  const received = plain.text.split('\n\n').filter((event) => event.startsWith('data: {')).map((event) => event.slice('data: '.length));
  const expected = written.filter((text) => !text.includes('"choices":[]')).map((text) => text.replace(',"usage":null', ''));
  t.ok(written[1]!.includes(',"usage":null') && expected[1]!.includes('"weight": 1.50, "note":"caf\\u00e9"'), 'the fixture has usage:null and the odd spellings');
  t.strictSame(received, expected, "each event: the provider's text, usage:null cut out, the usage chunk not sent");
  t.ok(plain.text.endsWith('data: [DONE]\n\n'));

  upstream.next(sse(transcript));
  const asked = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ ...request, stream: true, stream_options: { include_usage: true } }) });
  const all = asked.text.split('\n\n').filter((event) => event.startsWith('data: {')).map((event) => event.slice('data: '.length));
  t.strictSame(all, written, 'with include_usage: every event exactly as sent, the usage chunk last');

  // usage:null the gateway cannot cut with certainty (written with a space): that chunk is serialized, without it.
  const spaced = written.map((text, i) => (i === 2 ? text.replace('"usage":null', '"usage": null') : text));
  upstream.next(sse(`${spaced.map((text) => `data: ${text}\n\n`).join('')}data: [DONE]\n\n`));
  const fallback = await call(gateway.url, '/chat/completions', { body });
  const events = fallback.text.split('\n\n').filter((event) => event.startsWith('data: {')).map((event) => event.slice('data: '.length));
  const { usage: _usage, ...withoutUsage } = JSON.parse(spaced[2]!) as Record<string, unknown>;
  t.equal(events[2], JSON.stringify(withoutUsage), 'serialized by the gateway, usage left out');
  t.strictSame([...events.slice(0, 2), ...events.slice(3)], [...expected.slice(0, 2), ...expected.slice(3)], 'the others as sent');

  // A chunk the adapter changes is written as the gateway reads it.
  upstream.next(sse(transcript.replace('"finish_reason":"stop"', '"finish_reason":"model_length"')));
  const changed = await call(gateway.url, '/chat/completions', { body });
  const finish = changed.text.split('\n\n').find((event) => event.includes('"finish_reason":"length"'));
  t.ok(finish, 'the finish reason brought back to the enum');
  t.equal(finish, `data: ${JSON.stringify(JSON.parse(finish!.slice('data: '.length)))}`, 'serialized by the gateway');
});

t.test('each chunk reaches the client before the provider sends the next: none is held back', async (t) => {
  // The provider sends a content chunk only once the client holds the one before: a gateway that
  // buffered a chunk (waiting for more bytes, for the next event, for a timer) would never see the
  // stream end, and the test would time out.
  const words = ['The', ' capital', ' of', ' France', ' is', ' Paris', '.'];
  const received: string[] = [];
  let arrived: () => void = () => {};
  upstream.next(async (_request, res) => {
    const chunk = (delta: unknown, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'chatcmpl-x', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk({ role: 'assistant', content: '' }));
    for (const word of words) {
      const held = new Promise<void>((resolve) => (arrived = resolve));
      res.write(chunk({ content: word }));
      await held;
    }
    res.end(`${chunk({}, 'stop')}data: [DONE]\n\n`);
  });
  const stream = await gateway.client().chat.completions.create({ ...request, stream: true });
  for await (const chunk of stream) {
    const content = chunk.choices[0]?.delta.content;
    if (!content) continue;
    received.push(content);
    arrived();
  }
  t.same(received, words, 'every chunk, in order, each before the provider wrote the next');
});

t.test('an upstream error event after the first content reaches the SDK as an APIError', async (t) => {
  upstream.next(sse(fixture('openai/stream-error.sse'), { delayMs: 250 }));
  const stream = await gateway.client().chat.completions.create({ ...request, stream: true });
  const received: string[] = [];
  await t.rejects(
    (async () => {
      for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
    })(),
    { message: /server had an error/ },
  );
  t.same(received, ['The']);
});

t.test('an upstream error event before any content is an HTTP error, not a broken stream', async (t) => {
  upstream.next(sse(fixture('openai/stream-error.sse').split('\n\n').slice(1).join('\n\n')));
  await t.rejects(gateway.client().chat.completions.create({ ...request, stream: true }), { status: 503, message: 'Provider unavailable' });
});

t.test('GET /v1/models lists auto and the catalog in OpenAI list format', async (t) => {
  const models = await gateway.client().models.list();
  const ids = models.data.map((m) => m.id);
  t.ok(ids.includes('auto'));
  t.ok(ids.includes('gpt-4o-mini'));
  t.ok(ids.includes('claude-sonnet-4-5'));
  const raw = await call(gateway.url, '/models');
  t.equal(checkModelList(raw.json), null);
  const mini = raw.json.data.find((m: { id: string }) => m.id === 'gpt-4o-mini');
  t.equal(mini.available, true);
  t.equal(mini.pricing.input, 0.15);
  t.equal(raw.json.data.find((m: { id: string }) => m.id === 'claude-sonnet-4-5').available, false);
});

t.test('GET /v1/health needs no key and calls no provider', async (t) => {
  const health = await call(gateway.url, '/health', { key: null });
  t.equal(health.status, 200);
  t.equal(health.json.status, 'ok');
  // Its details need a key (test/e2e/health.test.ts).
  t.same((await call(gateway.url, '/health')).json.providers.configured, ['openai']);
  t.equal(upstream.requests.length, 0);
});

t.test('refusals carry OpenAI error bodies with the spec texts', async (t) => {
  const cases: Array<[string, Parameters<typeof call>[2], number, string, string | null]> = [
    ['missing key', { body: JSON.stringify(request), key: null }, 401, 'Invalid API key', null],
    ['unknown key', { body: JSON.stringify(request), key: 'uc_wrong' }, 401, 'Invalid API key', null],
    ['malformed header', { body: JSON.stringify(request), key: null, headers: { authorization: 'Basic abc' } }, 401, 'Invalid API key', null],
    ['unknown model', { body: JSON.stringify({ ...request, model: 'no-such-model' }) }, 404, 'Model not found', 'model'],
    ['model of an unconfigured provider', { body: JSON.stringify({ ...request, model: 'claude-sonnet-4-5' }) }, 404, 'Model unavailable', 'model'],
    ['invalid JSON', { body: '{"model":' }, 400, 'Request body is not valid JSON', null],
    ['missing messages', { body: JSON.stringify({ model: 'gpt-4o-mini' }) }, 400, "Invalid value for 'messages': is required.", 'messages'],
    ['bad role', { body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'robot', content: 'x' }] }) }, 400, "Invalid value for 'messages[0].role'", 'messages[0].role'],
    ['bad temperature', { body: JSON.stringify({ ...request, temperature: 7 }) }, 400, "Invalid value for 'temperature'", 'temperature'],
    ['unknown route', { method: 'GET' }, 404, 'Unknown endpoint', null],
  ];
  for (const [name, init, status, message, param] of cases) {
    const path = name === 'unknown route' ? '/nothing-here' : '/chat/completions';
    const response = await call(gateway.url, path, init);
    t.equal(response.status, status, `${name}: status`);
    t.equal(checkError(response.json), null, `${name}: body is an OpenAI error`);
    t.match(response.json.error.message, message, `${name}: message`);
    t.equal(response.json.error.param, param, `${name}: param`);
    t.ok(response.headers.get('x-request-id'), `${name}: x-request-id`);
    if (status === 401) t.match(response.headers.get('www-authenticate'), /^Bearer realm="modelgate"/);
  }
  t.equal(upstream.requests.length, 0, 'no refused request reached the provider');
});

t.test('the SDK sees 401 as AuthenticationError and 404 as NotFoundError', async (t) => {
  await t.rejects(gateway.client({ apiKey: 'uc_nope' }).chat.completions.create(request), { status: 401, message: /Invalid API key/ });
  await t.rejects(gateway.client().chat.completions.create({ ...request, model: 'gpt-nope' }), { status: 404, message: /Model not found/ });
});

t.test('a valid incoming x-request-id is echoed, an invalid one replaced', async (t) => {
  const echoed = await call(gateway.url, '/health', { key: null, headers: { 'x-request-id': 'trace-abc.123' } });
  t.equal(echoed.headers.get('x-request-id'), 'trace-abc.123');
  const replaced = await call(gateway.url, '/health', { key: null, headers: { 'x-request-id': 'bad id with spaces' } });
  t.not(replaced.headers.get('x-request-id'), 'bad id with spaces');
});

t.test('a client that aborts a stream cancels the upstream request', async (t) => {
  upstream.next(sse(fixture('openai/stream.sse'), { delayMs: 150 }));
  const controller = new AbortController();
  const stream = await gateway.client().chat.completions.create({ ...request, stream: true }, { signal: controller.signal });
  try {
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) controller.abort();
  } catch {
    // the SDK may end the loop or throw APIUserAbortError; either is an abort
  }
  for (let i = 0; i < 50 && upstream.aborted === 0; i++) await sleep(20);
  t.equal(upstream.aborted, 1, 'the upstream saw its request closed');
});

// Listening servers keep the event loop alive: end the root test explicitly so t.after runs.
t.end();
