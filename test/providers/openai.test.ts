// Golden tests of the OpenAI-compatible adapter (openai and custom): the canonical request, the
// recorded responses and transcripts, every error fixture.
import t from 'tap';
import { openai } from '../../providers/openai/index.js';
import { custom } from '../../providers/custom/index.js';
import { loadCatalog } from '../../core/catalog.js';
import { SseParser } from '../../core/sse.js';
import { isReceivedAsIs } from '../../core/provider.js';
import { receivedText } from '../../core/chunk-text.js';
import { isUpstreamError, type UpstreamError } from '../../core/upstream-error.js';
import type { ChatChunk, ChatRequest } from '../../core/chat-types.js';
import { fixture, fixtureJson } from '../helpers/fake-provider.js';
import { checkChunk, checkCompletion } from '../helpers/schema.js';
import { rejection } from '../helpers/rejection.js';

const catalog = loadCatalog();
const provider = openai.create({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: 'https://api.openai.com/v1', OPENAI_ORGANIZATION: 'org-1' });
const context = (model = 'gpt-4o-mini', stream = false) => ({ model: catalog.get('openai', model)!, stream, requestId: 'req-1' });

function streamOf(transcript: string, translator = provider.streamTranslator(context('gpt-4o-mini', true))) {
  const parser = new SseParser();
  const chunks: ChatChunk[] = [];
  for (const event of [...parser.push(transcript), ...parser.end()]) chunks.push(...translator.event(event));
  chunks.push(...translator.end());
  return { chunks, translator };
}

t.test('the canonical request passes through with the native model id and auth headers', async (t) => {
  const request: ChatRequest = fixtureJson('openai/request.json');
  const upstream = provider.chatRequest(request, context());
  t.equal(upstream.url, 'https://api.openai.com/v1/chat/completions');
  t.equal(upstream.headers.authorization, 'Bearer sk-test');
  t.equal(upstream.headers['openai-organization'], 'org-1');
  t.same(JSON.parse(upstream.body!), { ...request, stream: false });
});

t.test('streams always ask the upstream for usage', async (t) => {
  const request: ChatRequest = fixtureJson('openai/request-stream-tools.json');
  const body = JSON.parse(provider.chatRequest({ ...request, stream_options: undefined }, context('gpt-4o-mini', true)).body!);
  t.same(body.stream_options, { include_usage: true });
  t.equal(body.stream, true);
});

t.test('reasoning models get max_completion_tokens and no sampling parameters', async (t) => {
  const body = JSON.parse(provider.chatRequest({ model: 'gpt-5', messages: [{ role: 'user', content: 'x' }], max_tokens: 50, temperature: 0.3, top_p: 0.9 }, context('gpt-5')).body!);
  t.equal(body.max_completion_tokens, 50);
  t.notOk('max_tokens' in body);
  t.notOk('temperature' in body);
  t.notOk('top_p' in body);
});

t.test('responses come back schema-valid', async (t) => {
  for (const name of ['chat.json', 'chat-tool-calls.json']) {
    const completion = provider.chatResponse(fixtureJson(`openai/${name}`), context());
    t.equal(checkCompletion(completion), null, name);
  }
  const toolCall = provider.chatResponse(fixtureJson('openai/chat-tool-calls.json'), context());
  t.equal(toolCall.choices[0]!.finish_reason, 'tool_calls');
  t.equal(toolCall.choices[0]!.message.tool_calls![0]!.function.arguments, '{"city":"Paris"}');
});

t.test('a response in OpenAI\'s shape is marked as received; one the adapter changes is not', async (t) => {
  for (const name of ['chat.json', 'chat-tool-calls.json']) {
    t.ok(isReceivedAsIs(provider.chatResponse(fixtureJson(`openai/${name}`), context())), name);
  }
  const changes: Array<[string, (body: any) => void]> = [
    ['a finish reason outside the enum', (body) => (body.choices[0].finish_reason = 'model_length')],
    ['no logprobs', (body) => delete body.choices[0].logprobs],
    ['no refusal', (body) => delete body.choices[0].message.refusal],
    ['no content', (body) => delete body.choices[0].message.content],
    ['tool_calls: null', (body) => (body.choices[0].message.tool_calls = null)],
    ['another object type', (body) => (body.object = 'chat.completion.v2')],
  ];
  for (const [what, change] of changes) {
    const body = fixtureJson('openai/chat.json');
    change(body);
    t.notOk(isReceivedAsIs(provider.chatResponse(body, context())), what);
  }
  const untyped = fixtureJson('openai/chat-tool-calls.json');
  delete untyped.choices[0].message.tool_calls[0].type;
  const completion = provider.chatResponse(untyped, context());
  t.equal(completion.choices[0]!.message.tool_calls![0]!.type, 'function');
  t.notOk(isReceivedAsIs(completion), 'a tool call without its type');
  const other = custom.create({ CUSTOM_BASE_URL: 'http://localhost:11434/v1', CUSTOM_MODELS: [] });
  t.notOk(isReceivedAsIs(other.chatResponse(fixtureJson('openai/chat.json'), context())), 'a server we do not know: always serialized again');
});

t.test('a 200 without choices is a bad response, retryable elsewhere', async (t) => {
  const error = t.throws(() => provider.chatResponse({ hello: 'world' }, context())) as unknown as UpstreamError;
  t.ok(isUpstreamError(error));
  t.equal(error.status, 502);
  t.equal(error.reason, 'bad_response');
  t.equal(error.retryable, true);
});

t.test('stream transcripts translate chunk for chunk, usage and finish recorded', async (t) => {
  const { chunks, translator } = streamOf(fixture('openai/stream.sse'));
  t.equal(chunks.length, 7);
  for (const chunk of chunks) t.equal(checkChunk(chunk), null);
  t.equal(translator.finished, true);
  t.equal(translator.usage?.total_tokens, 32);
  const tools = streamOf(fixture('openai/stream-tool-calls.sse'));
  const args = tools.chunks.flatMap((c) => c.choices.flatMap((ch) => ch.delta.tool_calls ?? [])).map((call) => call.function?.arguments ?? '').join('');
  t.equal(args, '{"city":"Paris"}');
});

t.test("OpenAI's own answers and chunks pass through unchanged", async (t) => {
  for (const name of ['stream.sse', 'stream-tool-calls.sse']) {
    const transcript = fixture(`openai/${name}`);
    const sent = transcript.split('\n\n').filter((event) => event.startsWith('data: {')).map((event) => JSON.parse(event.slice('data: '.length)));
    // As JSON: a chunk also carries its event's text, under a symbol (the next test).
    t.strictSame(JSON.parse(JSON.stringify(streamOf(transcript).chunks)), sent, name);
  }
  for (const name of ['chat.json', 'chat-tool-calls.json']) t.strictSame(provider.chatResponse(fixtureJson(`openai/${name}`), context()), fixtureJson(`openai/${name}`), name);
});

t.test("OpenAI's chunks keep their event's text when the adapter changed nothing; changed ones, and other servers', do not", async (t) => {
  const transcript = fixture('openai/stream.sse');
  const texts = transcript.split('\n\n').filter((event) => event.startsWith('data: {')).map((event) => event.slice('data: '.length));
  t.strictSame(streamOf(transcript).chunks.map(receivedText), texts, 'each chunk: its data exactly as sent');
  const tools = streamOf(fixture('openai/stream-tool-calls.sse')).chunks;
  t.ok(tools.some((chunk) => chunk.choices.some((choice) => choice.delta.tool_calls)), 'the transcript has tool-call fragments');
  for (const chunk of tools) {
    const indexed = chunk.choices.some((choice) => choice.delta.tool_calls);
    t.equal(receivedText(chunk) === undefined, indexed, indexed ? 'a tool-call fragment, indexed anew: serialized' : 'a chunk without tool calls: as sent');
  }
  const chunk = (fields: string) => `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"x"},${fields}}]}\n\n`;
  const cases: Array<[string, string]> = [
    ['a finish reason outside the enum', chunk('"finish_reason":"model_length"')],
    ['another object type', chunk('"finish_reason":null').replace('"chat.completion.chunk"', '"chunk"')],
    ['usage on a chunk with choices (moved to a chunk of its own)', chunk('"finish_reason":"stop"').replace(/]}\n/, '],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}\n')],
    ['data over two lines', chunk('"finish_reason":null').replace('"choices"', '\ndata: "choices"')],
  ];
  for (const [what, event] of cases) {
    const [first] = streamOf(event).chunks;
    t.ok(first, `${what}: translated`);
    t.equal(receivedText(first!), undefined, what);
  }
  t.ok(receivedText(streamOf(chunk('"finish_reason":null')).chunks[0]!), 'the same chunk unchanged keeps its text');
  const other = custom.create({ CUSTOM_BASE_URL: 'http://localhost:11434/v1', CUSTOM_MODELS: [] });
  const served = streamOf(transcript, other.streamTranslator(context('gpt-4o-mini', true))).chunks;
  t.ok(served.length > 0 && served.every((c) => receivedText(c) === undefined), 'a server we do not know: always serialized again');
});

t.test('a stream that stops without finishing is not finished', async (t) => {
  const cut = fixture('openai/stream.sse').split('\n\n').slice(0, 3).join('\n\n') + '\n\n';
  t.equal(streamOf(cut).translator.finished, false);
});

t.test('an error event inside the stream throws', async (t) => {
  t.throws(() => streamOf(fixture('openai/stream-error.sse')), {
    reason: 'stream_error',
    retryable: true,
    message: 'The openai provider reported an error in the stream: The server had an error while processing your request. Sorry about that!',
  });
  const invalid = 'data: {"error":{"message":"bad schema","type":"invalid_request_error","param":null,"code":null}}\n\n';
  t.match(rejection(() => streamOf(invalid)), { reason: 'stream_error', retryable: false }, 'a refusal of the request is not retried');
});

t.test('every error fixture maps to its status, retry decision and message', async (t) => {
  const cases: Array<[string, number, number, boolean, RegExp]> = [
    ['error-401.json', 401, 502, false, /rejected the gateway's credentials/],
    ['error-404.json', 404, 404, false, /does not exist/],
    ['error-429-rate-limit.json', 429, 429, true, /Rate limit reached/],
    ['error-429-quota.json', 429, 429, true, /exceeded your current quota/],
    ['error-500.json', 500, 503, true, /server had an error/],
    ['error-503.json', 503, 503, true, /overloaded/],
    ['error-503-legacy.json', 503, 503, true, /overloaded/],
  ];
  for (const [file, upstreamStatus, status, retryable, message] of cases) {
    const error = provider.error(upstreamStatus, { 'retry-after': '7' }, fixture(`openai/${file}`));
    t.equal(error.status, status, `${file}: status`);
    t.equal(error.retryable, retryable, `${file}: retryable`);
    t.match(error.message, message, `${file}: message`);
    t.equal(error.retryAfterMs, 7000, `${file}: Retry-After`);
  }
  const auth = provider.error(401, {}, fixture('openai/error-401.json'));
  t.equal(auth.message, "The openai provider rejected the gateway's credentials (HTTP 401); check OPENAI_API_KEY");
  t.notMatch(auth.message, /sk-/, "the provider key's hint never reaches the client");
});

t.test('the custom provider is OpenAI-compatible at its own base URL, key optional', async (t) => {
  const local = custom.create({ CUSTOM_BASE_URL: 'http://localhost:11434/v1/', CUSTOM_MODELS: [] });
  t.equal(local.configured, true);
  const upstream = local.chatRequest({ model: 'x', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5, temperature: 0.1 }, { ...context(), model: { ...context().model, native_id: 'llama3' } });
  t.equal(upstream.url, 'http://localhost:11434/v1/chat/completions');
  t.equal(upstream.headers.authorization, undefined);
  t.same(JSON.parse(upstream.body!), { model: 'llama3', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5, temperature: 0.1 });
  t.equal(custom.create({ CUSTOM_MODELS: [] }).configured, false, 'without a base URL it is not configured');
  t.same(custom.extraModels!({ CUSTOM_MODELS: ['llama3', 'qwen'] }), ['llama3', 'qwen']);
});
