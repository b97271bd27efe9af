// The response cache with its memory backend, end to end: the real gateway, the OpenAI SDK as
// client, a fake OpenAI upstream whose request count shows whether the cache answered.
import t from 'tap';
import type OpenAI from 'openai';
import { startGateway, call, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, openAIResponder, PROVIDER_KEYS } from '../helpers/fakes.js';
import { fixture, fixtureJson, json, sleep, sse, type FakeProvider, type Responder } from '../helpers/fake-provider.js';
import { checkChunk, checkCompletion, checkError } from '../helpers/schema.js';
import { scrape } from '../helpers/metrics.js';
import type { KeyStore } from '../../core/key-store.js';

const ACME_KEY = 'uc_acme_tenant_0123456789';
const acme: KeyStore = { verify: (secret) => (secret === ACME_KEY ? { keyId: 'acme-key', tenant: 'acme', admin: false } : undefined) };

let upstream: FakeProvider;
let gateway: TestGateway;
// One attempt per request and no breaker, so a scripted upstream failure is the answer.
const providerEnv = () => ({ OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_RETRIES: '0', MODELGATE_CIRCUIT_BREAKER_ENABLED: 'false' });

t.before(async () => {
  upstream = await startFakeOpenAI();
  gateway = await startGateway(providerEnv(), { keyStores: [acme] });
});
t.after(async () => {
  await gateway.close();
  await upstream.close();
});
t.beforeEach(() => upstream.reset());

type Body = Omit<OpenAI.ChatCompletionCreateParams, 'stream'>;
/** A request no other test sends, so each test starts with an empty cache for it. */
const ask = (question: string, extra: Partial<Body> = {}): Body => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: question }], ...extra });

/** The fixture's completion saying `content`. */
function answering(content: string): Responder {
  const body = fixtureJson('openai/chat.json');
  body.choices[0].message.content = content;
  return json(200, body);
}

async function complete(body: Body, options: { headers?: Record<string, string>; apiKey?: string; on?: TestGateway } = {}) {
  const client = (options.on ?? gateway).client({ apiKey: options.apiKey });
  const { data, response } = await client.chat.completions.create({ ...body, stream: false }, { headers: options.headers }).withResponse();
  return { data, cache: response.headers.get('x-modelgate-cache'), headers: response.headers };
}

async function streamed(body: Body, options: { headers?: Record<string, string> } = {}) {
  const { data, response } = await gateway.client().chat.completions.create({ ...body, stream: true }, { headers: options.headers }).withResponse();
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of data) chunks.push(chunk);
  return { chunks, cache: response.headers.get('x-modelgate-cache'), headers: response.headers };
}

const text = (chunks: OpenAI.ChatCompletionChunk[]) => chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');

t.test('a repeated request is answered from the cache without calling the provider, at no cost', async (t) => {
  const first = await complete(ask('What is the capital of France?'));
  t.equal(first.cache, 'MISS');
  t.ok(Number(first.headers.get('x-modelgate-cost')) > 0);
  t.equal(upstream.requests.length, 1);

  const second = await complete(ask('What is the capital of France?'));
  t.equal(second.cache, 'HIT');
  t.equal(upstream.requests.length, 1, 'the provider was not called again');
  t.equal(checkCompletion(second.data), null);
  t.same(second.data, first.data, 'the same answer, usage included');
  t.equal(second.headers.get('x-modelgate-cost'), '0');
  t.equal(second.headers.get('x-modelgate-attempts'), '0');
  t.equal(second.headers.get('x-modelgate-provider'), 'openai');
  t.equal(second.headers.get('x-modelgate-model'), 'gpt-4o-mini');
  t.equal(first.headers.get('x-modelgate-strategy'), 'cost_optimized');
  t.equal(second.headers.get('x-modelgate-strategy'), 'cost_optimized', 'a hit names the strategy as a miss does');
  const overridden = { ...ask('What is the capital of Peru?'), modelgate: { routing: { strategy: 'quality_optimized' } } } as Body;
  await complete(overridden);
  const overriddenHit = await complete(overridden);
  t.equal(overriddenHit.cache, 'HIT');
  t.equal(overriddenHit.headers.get('x-modelgate-strategy'), 'quality_optimized', "the request's own strategy");
});

t.test('a hit writes the bytes the first client received; a log line of it still holds the completion', async (t) => {
  const logged = await startGateway({ ...providerEnv(), MODELGATE_LOG_RESPONSES: 'true' });
  t.teardown(() => logged.close());
  upstream.next(answering('Bytes as first sent.'));
  const body = JSON.stringify({ ...ask('Byte for byte?'), stream: false });
  const first = await call(logged.url, '/chat/completions', { body });
  t.equal(first.headers.get('x-modelgate-cache'), 'MISS');
  let second: Awaited<ReturnType<typeof call>> | undefined;
  for (let i = 0; i < 50 && second?.headers.get('x-modelgate-cache') !== 'HIT'; i++) second = await call(logged.url, '/chat/completions', { body });
  t.equal(second?.headers.get('x-modelgate-cache'), 'HIT');
  t.equal(second?.text, first.text, 'the same bytes');
  t.equal(second?.headers.get('content-length'), String(Buffer.byteLength(first.text)));
  t.equal(checkCompletion(second?.json), null);
  let line: Record<string, unknown> | undefined;
  for (let i = 0; i < 100 && !line; i++) {
    line = logged.logs.find((entry) => entry.msg === 'request' && entry.requestId === second?.headers.get('x-request-id'));
    if (!line) await sleep(10);
  }
  t.match(line?.response, { choices: [{ message: { content: 'Bytes as first sent.' } }] }, 'the hit is logged with its completion');
});

t.test("a hit writes the provider's own bytes when the adapter left the completion as it came", async (t) => {
  const raw = `{"provider_note" :  [1.50, 1e2],${JSON.stringify(fixtureJson('openai/chat.json')).slice(1)}`;
  upstream.next(json(200, raw));
  const body = JSON.stringify({ ...ask('As the provider wrote it?'), stream: false });
  const first = await call(gateway.url, '/chat/completions', { body });
  t.equal(first.headers.get('x-modelgate-cache'), 'MISS');
  t.equal(first.text, raw);
  let second: Awaited<ReturnType<typeof call>> | undefined;
  for (let i = 0; i < 50 && second?.headers.get('x-modelgate-cache') !== 'HIT'; i++) second = await call(gateway.url, '/chat/completions', { body });
  t.equal(second?.headers.get('x-modelgate-cache'), 'HIT');
  t.equal(second?.text, raw, 'the same bytes from the cache');
  const replayed = await streamed(ask('As the provider wrote it?'));
  t.equal(replayed.cache, 'HIT');
  t.equal(text(replayed.chunks), fixtureJson('openai/chat.json').choices[0].message.content, 'and as a stream, parsed from them');
});

t.test('the same request written differently hits; a different parameter misses', async (t) => {
  await complete(ask('Key order?', { temperature: 0.5, max_tokens: 20 }));
  const reordered = await call(gateway.url, '/chat/completions', {
    body: JSON.stringify({ max_tokens: 20, top_p: null, stream: false, temperature: 0.5, messages: [{ content: 'Key order?', role: 'user' }], model: 'gpt-4o-mini' }),
  });
  t.equal(reordered.headers.get('x-modelgate-cache'), 'HIT', 'key order, null fields and the stream flag do not matter');
  const warmer = await complete(ask('Key order?', { temperature: 0.6, max_tokens: 20 }));
  t.equal(warmer.cache, 'MISS', 'another temperature is another request');
  const pinned = await complete(ask('Key order?', { model: 'openai/gpt-4o-mini', temperature: 0.5, max_tokens: 20 }));
  t.equal(pinned.cache, 'MISS', 'the model as requested is part of the key');
  t.equal(upstream.requests.length, 3);
});

t.test("one tenant is never served another tenant's answer", async (t) => {
  upstream.next(answering('for the default tenant'), answering('for acme'));
  const mine = await complete(ask('Whose answer is this?'));
  const theirs = await complete(ask('Whose answer is this?'), { apiKey: ACME_KEY });
  t.equal(theirs.cache, 'MISS');
  t.equal(theirs.data.choices[0]!.message.content, 'for acme');
  t.equal(upstream.requests.length, 2);
  const mineAgain = await complete(ask('Whose answer is this?'));
  const theirsAgain = await complete(ask('Whose answer is this?'), { apiKey: ACME_KEY });
  t.equal(mineAgain.cache, 'HIT');
  t.equal(mineAgain.data.choices[0]!.message.content, mine.data.choices[0]!.message.content);
  t.equal(theirsAgain.cache, 'HIT');
  t.equal(theirsAgain.data.choices[0]!.message.content, 'for acme');
  t.equal(upstream.requests.length, 2);
});

t.test('bypass: x-modelgate-cache: bypass, modelgate.cache off and Cache-Control: no-store neither read nor store', async (t) => {
  const forms: Array<[string, Body, Record<string, string>]> = [
    ['header', ask('Bypass by header'), { 'x-modelgate-cache': 'bypass' }],
    ['body override object', { ...ask('Bypass by body object'), modelgate: { cache: { enabled: false } } } as Body, {}],
    ['no-store', ask('Bypass by no-store'), { 'cache-control': 'no-store' }],
  ];
  for (const [name, body, headers] of forms) {
    upstream.reset();
    await complete(body); // stored: a bypass must not read it
    const bypassed = await complete(body, { headers });
    t.equal(bypassed.cache, 'BYPASS', `${name}: says BYPASS`);
    t.equal(upstream.requests.length, 2, `${name}: the provider was called`);
    t.notOk('modelgate' in upstream.last!.json, `${name}: the override is not forwarded`);
  }
  upstream.reset();
  const fresh = ask('Never stored');
  await complete(fresh, { headers: { 'x-modelgate-cache': 'bypass' } });
  await complete(fresh, { headers: { 'cache-control': 'no-store' } });
  t.equal((await complete(fresh)).cache, 'MISS', 'nothing was stored by the bypassed requests');
  t.equal(upstream.requests.length, 3);
});

t.test('Cache-Control: no-cache skips the stored answer but stores the fresh one', async (t) => {
  upstream.next(answering('old'), answering('new'));
  await complete(ask('Refresh me'));
  const refreshed = await complete(ask('Refresh me'), { headers: { 'cache-control': 'max-age=0, no-cache' } });
  t.equal(refreshed.cache, 'BYPASS');
  t.equal(refreshed.data.choices[0]!.message.content, 'new');
  const next = await complete(ask('Refresh me'));
  t.equal(next.cache, 'HIT');
  t.equal(next.data.choices[0]!.message.content, 'new');
  t.equal(upstream.requests.length, 2);
});

t.test('a malformed cache override is refused with 400 naming it', async (t) => {
  const body = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ ...ask('Bad override'), modelgate: { cache: 'off' } }) });
  t.equal(body.status, 400);
  t.equal(checkError(body.json), null);
  t.equal(body.json.error.param, 'modelgate.cache');
  const unknown = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ ...ask('Bad override'), modelgate: { cache: { ttl: 5 } } }) });
  t.equal(unknown.status, 400);
  t.equal(unknown.json.error.param, 'modelgate.cache.ttl');
  const header = await call(gateway.url, '/chat/completions', { body: JSON.stringify(ask('Bad header')), headers: { 'x-modelgate-cache': 'maybe' } });
  t.equal(header.status, 400);
  t.match(header.json.error.message, /x-modelgate-cache/);
  t.equal(upstream.requests.length, 0);
});

t.test('a streamed answer is stored once complete and replayed as a valid stream, usage only when asked', async (t) => {
  const first = await streamed(ask('Stream me'));
  t.equal(first.cache, 'MISS');
  const replay = await streamed(ask('Stream me'));
  t.equal(replay.cache, 'HIT');
  t.equal(upstream.requests.length, 1);
  t.equal(replay.headers.get('x-modelgate-cost'), '0');
  for (const chunk of replay.chunks) t.equal(checkChunk(chunk), null);
  t.equal(text(replay.chunks), 'The capital of France is Paris.');
  t.strictSame(replay.chunks, first.chunks, 'chunk for chunk what the provider streamed, without usage when not asked');

  const withUsage = await streamed(ask('Stream me', { stream_options: { include_usage: true } } as Partial<Body>));
  t.equal(withUsage.cache, 'HIT');
  t.equal(upstream.requests.length, 1);
  for (const chunk of withUsage.chunks) t.equal(checkChunk(chunk), null);
  const last = withUsage.chunks.at(-1)!;
  t.same(last.choices, []);
  t.equal(last.usage?.total_tokens, 32);
  const live = await streamed(ask('Stream me', { stream_options: { include_usage: true } } as Partial<Body>), { headers: { 'x-modelgate-cache': 'bypass' } });
  t.strictSame(withUsage.chunks, live.chunks, 'with include_usage, the same chunks a live stream sends');
});

t.test("OpenAI's chunks stored as OpenAI wrote them replay as the same chunks, with usage or without", async (t) => {
  // Spellings JSON.stringify would write differently: the entry holds the texts as sent.
  const transcript = fixture('openai/stream.sse').replaceAll('"id":"chatcmpl-123"', '"weight": 1.50, "note":"caf\\u00e9","id":"chatcmpl-123"');
  upstream.next(sse(transcript));
  const first = await streamed(ask('Stream me as written'));
  t.equal(first.cache, 'MISS');
  t.equal((first.chunks[1] as unknown as { note: string }).note, 'café');
  const replay = await streamed(ask('Stream me as written'));
  t.equal(replay.cache, 'HIT');
  t.strictSame(replay.chunks, first.chunks, 'the same chunks, usage left out');
  const withUsage = await streamed(ask('Stream me as written', { stream_options: { include_usage: true } } as Partial<Body>));
  t.equal(withUsage.cache, 'HIT');
  t.equal(withUsage.chunks.at(-1)!.usage?.total_tokens, 32);
  t.strictSame(withUsage.chunks.slice(0, -1).map(({ usage: _u, ...rest }) => rest), first.chunks, 'the same chunks, then the usage');
  const completion = await complete(ask('Stream me as written'));
  t.equal(completion.cache, 'HIT');
  t.equal(completion.data.choices[0]!.message.content, 'The capital of France is Paris.');
  t.equal(upstream.requests.length, 1, 'one call to the provider');
});

t.test('a streamed answer serves a non-stream request as a completion', async (t) => {
  await streamed(ask('Stream then complete'));
  const hit = await complete(ask('Stream then complete'));
  t.equal(hit.cache, 'HIT');
  t.equal(checkCompletion(hit.data), null);
  t.equal(hit.data.choices[0]!.message.content, 'The capital of France is Paris.');
  t.equal(hit.data.choices[0]!.finish_reason, 'stop');
  t.equal(hit.data.usage?.total_tokens, 32, 'the usage the stream reported');
  t.equal(upstream.requests.length, 1);
});

t.test('a completion serves a streaming request as a valid stream', async (t) => {
  await complete(ask('Complete then stream'));
  const hit = await streamed(ask('Complete then stream'));
  t.equal(hit.cache, 'HIT');
  t.ok(hit.chunks.length >= 2);
  for (const chunk of hit.chunks) t.equal(checkChunk(chunk), null);
  t.equal(text(hit.chunks), 'The capital of France is Paris.');
  t.equal(hit.chunks.at(-1)!.choices[0]!.finish_reason, 'stop');
  t.equal(upstream.requests.length, 1);
});

t.test('streamed tool calls are reassembled for a non-stream request', async (t) => {
  const tools = fixtureJson('openai/request-stream-tools.json');
  const body = ask("What's the weather in Paris?", { tools: tools.tools, tool_choice: 'auto' });
  await streamed(body);
  const hit = await complete(body);
  t.equal(hit.cache, 'HIT');
  t.equal(checkCompletion(hit.data), null);
  t.same(hit.data.choices[0]!.message.tool_calls, fixtureJson('openai/chat-tool-calls.json').choices[0].message.tool_calls);
  t.equal(hit.data.choices[0]!.finish_reason, 'tool_calls');
});

t.test('errors and interrupted streams are not stored', async (t) => {
  upstream.next(json(500, fixtureJson('openai/error-500.json')));
  await t.rejects(complete(ask('Failing')), { status: 503, message: /.+/ });
  t.equal((await complete(ask('Failing'))).cache, 'MISS', 'the error was not stored');

  upstream.reset();
  // Paced, so the error arrives after the first content went out: a stream broken mid-way.
  upstream.next(sse(fixture('openai/stream-error.sse'), { delayMs: 250 }));
  await t.rejects(streamed(ask('Broken stream')), { message: /server had an error/ });
  t.equal((await streamed(ask('Broken stream'))).cache, 'MISS', 'the broken stream was not stored');
  t.equal(upstream.requests.length, 2);
});

t.test('an entry expires after MODELGATE_CACHE_TTL and leaves the size gauges without being read', async (t) => {
  const short = await startGateway({ ...providerEnv(), MODELGATE_CACHE_TTL: '2', MODELGATE_METRICS_INTERVAL: '1000' });
  t.teardown(() => short.close());
  await complete(ask('Short-lived'), { on: short });
  t.equal((await scrape(short.url)).value('modelgate_cache_entries', { backend: 'memory' }), 1);
  let entries: number | undefined = 1;
  for (let i = 0; i < 150 && entries !== 0; i++) {
    await sleep(100);
    entries = (await scrape(short.url)).value('modelgate_cache_entries', { backend: 'memory' });
  }
  t.equal(entries, 0, 'the expired entry was swept');
  t.equal((await complete(ask('Short-lived'), { on: short })).cache, 'MISS');
  t.equal(upstream.requests.length, 2);
});

t.test('the memory cache evicts the least recently used answers beyond MODELGATE_CACHE_MAX_SIZE', async (t) => {
  // 1 MB holds two 400 kB answers (stored uncompressed here), not three.
  const small = await startGateway({ ...providerEnv(), MODELGATE_CACHE_MAX_SIZE: '1', MODELGATE_CACHE_COMPRESSION: 'false' });
  t.teardown(() => small.close());
  const big = answering('x'.repeat(400_000));
  upstream.fallback = big;
  t.teardown(() => void (upstream.fallback = openAIResponder()));
  for (const question of ['first', 'second', 'third']) t.equal((await complete(ask(question), { on: small })).cache, 'MISS');
  const metrics = await scrape(small.url);
  t.equal(metrics.value('modelgate_cache_evictions_total'), 1);
  t.equal(metrics.value('modelgate_cache_entries', { backend: 'memory' }), 2);
  const size = metrics.value('modelgate_cache_size_bytes', { backend: 'memory' })!;
  t.ok(size > 800_000 && size <= 1024 * 1024, `two uncompressed answers stored (${size} bytes)`);
  t.equal((await complete(ask('third'), { on: small })).cache, 'HIT', 'the most recent stays');
  t.equal((await complete(ask('first'), { on: small })).cache, 'MISS', 'the oldest was evicted');
  t.equal(upstream.requests.length, 4);
});

t.test('with compression on, a repetitive answer takes a fraction of its size', async (t) => {
  upstream.next(answering('y'.repeat(400_000)));
  const before = (await scrape(gateway.url)).value('modelgate_cache_size_bytes', { backend: 'memory' })!;
  await complete(ask('Compress me'));
  const after = (await scrape(gateway.url)).value('modelgate_cache_size_bytes', { backend: 'memory' })!;
  t.ok(after - before > 0 && after - before < 20_000, `stored ${after - before} bytes for a 400 kB answer`);
  const hit = await complete(ask('Compress me'));
  t.equal(hit.cache, 'HIT');
  t.equal(hit.data.choices[0]!.message.content, 'y'.repeat(400_000));
});

// Listening servers keep the event loop alive: end the root test explicitly so t.after runs.
t.end();
