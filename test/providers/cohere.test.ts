// Golden tests of the cohere adapter (Kong style): an OpenAI request written here must become exactly
// the native request fixture; each native response and stream transcript must come back as the
// OpenAI response and chunks a client expects (schema-valid); each error body maps to a status.
import t from 'tap';
import { cohere } from '../../providers/cohere/index.js';
import { loadCatalog, type CatalogModel } from '../../core/catalog.js';
import type { ChatRequest } from '../../core/chat-types.js';
import { isGatewayError } from '../../core/errors.js';
import { isUpstreamError, type UpstreamError } from '../../core/upstream-error.js';
import type { TranslateContext } from '../../core/provider.js';
import { fixture, fixtureJson } from '../helpers/fake-provider.js';
import { checkChunk, checkCompletion } from '../helpers/schema.js';
import { replay, streamedText, toCrlf } from '../helpers/replay.js';
import { rejection } from '../helpers/rejection.js';

const provider = cohere.create({ COHERE_API_KEY: 'co-key', COHERE_BASE_URL: 'https://api.cohere.com/' });
const model = loadCatalog().get('cohere', 'command-a-03-2025')!;
const context = (stream = false, m: CatalogModel = model): TranslateContext => ({ model: m, stream, requestId: 'req-1' });
const translate = (request: ChatRequest, stream = false, m?: CatalogModel) => JSON.parse(provider.chatRequest(request, context(stream, m)).body!);

const simple: ChatRequest = {
  model: 'cohere/command-a-03-2025',
  messages: [
    { role: 'system', content: 'You are a concise assistant.' },
    { role: 'user', content: 'What is the capital of France?' },
  ],
  temperature: 0.2,
  max_completion_tokens: 64,
  stop: '\n\n\n',
  user: 'user-1234',
  n: 1,
};

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'weather',
    description: 'Get current weather for a location',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};

const withToolResult: ChatRequest = {
  model: 'command-a-03-2025',
  stream: true,
  stream_options: { include_usage: true },
  messages: [
    { role: 'user', content: "What's the weather in San Francisco?" },
    {
      role: 'assistant',
      content: 'I will use the weather tool.',
      tool_calls: [{ id: 'weather_e8p4pn45zt0t', type: 'function', function: { name: 'weather', arguments: '{"location":"San Francisco"}' } }],
    },
    { role: 'tool', tool_call_id: 'weather_e8p4pn45zt0t', content: '{"temperature_c":18,"condition":"foggy"}' },
  ],
  tools: [weatherTool],
  tool_choice: 'auto',
  parallel_tool_calls: true,
};

t.test('the canonical request becomes request.json: stop_sequences, max_tokens, no user or n', async (t) => {
  t.strictSame(translate(simple), fixtureJson('cohere/request.json'));
  const upstream = provider.chatRequest(simple, context());
  t.equal(upstream.url, 'https://api.cohere.com/v2/chat');
  t.equal(upstream.method, 'POST');
  t.equal(upstream.headers.authorization, 'Bearer co-key');
  t.equal(upstream.headers['content-type'], 'application/json');
});

t.test('a tool round trip becomes request-tools.json: the plan as tool_plan, the result as a document', async (t) => {
  t.strictSame(translate(withToolResult, true), fixtureJson('cohere/request-tools.json'));
  t.equal(provider.chatRequest(withToolResult, context(true)).headers.accept, 'text/event-stream');
});

t.test('sampling parameters are renamed and brought into Cohere ranges', async (t) => {
  const body = translate({ ...simple, top_p: 1, seed: 7, frequency_penalty: 1.5, presence_penalty: -0.5, max_tokens: 10, max_completion_tokens: 20 });
  t.equal(body.p, 0.99, 'top_p 1 is the largest p Cohere takes');
  t.equal(body.seed, 7);
  t.equal(body.frequency_penalty, 1);
  t.equal(body.presence_penalty, 0);
  t.equal(body.max_tokens, 20, 'max_completion_tokens wins over max_tokens');
  t.equal(translate({ ...simple, top_p: 0 }).p, 0.01);
  t.notOk('top_p' in body);
});

t.test('developer messages are system messages; text parts stay parts', async (t) => {
  const body = translate({ ...simple, messages: [{ role: 'developer', content: [{ type: 'text', text: 'Be brief.' }] }, { role: 'user', content: [{ type: 'text', text: 'Hi' }] }] });
  t.strictSame(body.messages, [
    { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
    { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
  ]);
});

t.test('images go as image_url parts to a vision model and are refused for one without vision', async (t) => {
  const request: ChatRequest = { ...simple, messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } }] }] };
  const error = rejection(() => translate(request));
  t.ok(isGatewayError(error), 'a 400, not an upstream call');
  t.match(error, { status: 400, param: 'messages[0].content[1]', message: /does not accept images/ });
  const vision = { ...model, id: 'command-a-vision-07-2025', native_id: 'command-a-vision-07-2025', capabilities: { ...model.capabilities, vision: true } };
  t.strictSame(translate(request, false, vision).messages[0].content, [
    { type: 'text', text: 'What is this?' },
    { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
  ]);
});

t.test('what Cohere cannot honour is refused with 400 naming the parameter', async (t) => {
  const cases: Array<[string, Partial<ChatRequest>, string]> = [
    ['log probabilities', { logprobs: true }, 'logprobs'],
    ['top log probabilities', { top_logprobs: 2 }, 'top_logprobs'],
    ['token biases', { logit_bias: { '42': 10 } }, 'logit_bias'],
    ['audio output', { modalities: ['text', 'audio'] }, 'modalities'],
    ['an audio part', { messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] }, 'messages[0].content[0]'],
    ['a function message', { messages: [{ role: 'function', name: 'f', content: '1' }] }, 'messages[0].role'],
    ['a named tool that is not offered', { tools: [weatherTool], tool_choice: { type: 'function', function: { name: 'stocks' } } }, 'tool_choice'],
  ];
  for (const [name, change, param] of cases) {
    const error = rejection(() => translate({ ...simple, ...change }));
    t.match(error, { status: 400, param }, name);
  }
  t.notOk(rejection(() => translate({ ...simple, logprobs: false, logit_bias: {}, modalities: ['text'] })), 'the OpenAI defaults are fine');
});

t.test('tool_choice maps to NONE and REQUIRED; a named function is the only tool offered, required', async (t) => {
  const stocks = { type: 'function' as const, function: { name: 'stocks', parameters: { type: 'object', properties: {} }, strict: true } };
  t.equal(translate({ ...simple, tools: [weatherTool], tool_choice: 'none' }).tool_choice, 'NONE');
  t.equal(translate({ ...simple, tools: [weatherTool], tool_choice: 'required' }).tool_choice, 'REQUIRED');
  t.notOk('tool_choice' in translate({ ...simple, tools: [weatherTool], tool_choice: 'auto' }));
  const named = translate({ ...simple, tools: [weatherTool, stocks], tool_choice: { type: 'function', function: { name: 'stocks' } } });
  t.equal(named.tool_choice, 'REQUIRED');
  t.strictSame(named.tools, [{ type: 'function', function: { name: 'stocks', parameters: { type: 'object', properties: {} } } }], 'strict is not a Cohere tool field');
  t.equal(named.strict_tools, true, 'a strict tool makes Cohere enforce the schemas');
  t.notOk('tool_choice' in translate({ ...simple, tool_choice: 'none' }), 'no tools, no tool_choice');
});

t.test('JSON mode and JSON schema both become Cohere json_object', async (t) => {
  const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
  t.strictSame(translate({ ...simple, response_format: { type: 'json_object' } }).response_format, { type: 'json_object' });
  t.strictSame(translate({ ...simple, response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } } }).response_format, { type: 'json_object', json_schema: schema });
  t.notOk('response_format' in translate({ ...simple, response_format: { type: 'text' } }));
});

t.test('chat.json comes back as a schema-valid completion billed by billed_units', async (t) => {
  const completion = provider.chatResponse(fixtureJson('cohere/chat.json'), context());
  t.equal(checkCompletion(completion), null);
  t.equal(completion.id, 'e7592632-1e3d-424f-b129-bd5f9f980f7b');
  t.equal(completion.model, 'command-a-03-2025');
  t.equal(completion.choices[0]!.message.content, 'The capital of France is Paris.');
  t.equal(completion.choices[0]!.finish_reason, 'stop');
  t.strictSame(completion.usage, { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 }, 'not the 507 template tokens, no cached discount');
});

t.test('chat-tool-call.json comes back as an OpenAI tool call without the plan as content', async (t) => {
  const completion = provider.chatResponse(fixtureJson('cohere/chat-tool-call.json'), context());
  t.equal(checkCompletion(completion), null);
  const message = completion.choices[0]!.message;
  t.equal(message.content, null);
  t.strictSame(message.tool_calls, [{ id: 'weather_dqgshstja6p9', type: 'function', function: { name: 'weather', arguments: '{"location":"San Francisco"}' } }]);
  t.equal(completion.choices[0]!.finish_reason, 'tool_calls');
  t.strictSame(completion.usage, { prompt_tokens: 119, completion_tokens: 30, total_tokens: 149 });
});

t.test('finish reasons map as providers.md §5; ERROR and TIMEOUT are failed attempts', async (t) => {
  const answer = (finish: string) => provider.chatResponse({ ...fixtureJson('cohere/chat.json'), finish_reason: finish }, context()).choices[0]!.finish_reason;
  t.equal(answer('COMPLETE'), 'stop');
  t.equal(answer('STOP_SEQUENCE'), 'stop');
  t.equal(answer('MAX_TOKENS'), 'length');
  for (const finish of ['ERROR', 'TIMEOUT']) {
    const error = rejection(() => answer(finish)) as UpstreamError;
    t.ok(isUpstreamError(error), finish);
    t.equal(error.retryable, true, `${finish} is worth another attempt`);
  }
  t.match(rejection(() => provider.chatResponse({ id: 'x' }, context())), { reason: 'bad_response', status: 502 });
});

for (const [framing, transform] of [['LF', (s: string) => s], ['CRLF', toCrlf]] as const) {
  t.test(`stream.sse (${framing}) streams the text, then the finish, then the usage chunk`, async (t) => {
    const translator = provider.streamTranslator(context(true));
    const chunks = replay(translator, transform(fixture('cohere/stream.sse')));
    for (const chunk of chunks) t.equal(checkChunk(chunk), null);
    t.equal(chunks[0]!.choices[0]!.delta.role, 'assistant', 'the first chunk carries the role');
    t.equal(streamedText(chunks), 'The capital of France is Paris.');
    t.ok(chunks.every((c) => c.id === '321d178c-2c12-44d3-ae42-2f5510f6b1cc'));
    const finish = chunks.at(-2)!;
    t.equal(finish.choices[0]!.finish_reason, 'stop');
    t.strictSame(chunks.at(-1)!.choices, []);
    t.strictSame(chunks.at(-1)!.usage, { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 });
    t.strictSame(translator.usage, { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 });
    t.equal(translator.finished, true);
  });

  t.test(`stream-tool-call.sse (${framing}) streams one tool call with a stable index and id`, async (t) => {
    const translator = provider.streamTranslator(context(true));
    const chunks = replay(translator, transform(fixture('cohere/stream-tool-call.sse')));
    for (const chunk of chunks) t.equal(checkChunk(chunk), null);
    t.equal(streamedText(chunks), '', 'the tool plan is not streamed as content');
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    t.strictSame(calls[0], { index: 0, id: 'weather_e8p4pn45zt0t', type: 'function', function: { name: 'weather', arguments: '' } });
    t.ok(calls.slice(1).every((call) => call.index === 0 && call.id === undefined), 'later fragments carry only the index');
    t.equal(calls.map((call) => call.function?.arguments).join(''), '{"location": "San Francisco"}');
    t.equal(chunks.at(-2)!.choices[0]!.finish_reason, 'tool_calls');
    t.strictSame(translator.usage, { prompt_tokens: 119, completion_tokens: 30, total_tokens: 149 });
    t.equal(translator.finished, true);
  });
}

t.test('a stream that ends before message-end is not finished (core reports it truncated)', async (t) => {
  const translator = provider.streamTranslator(context(true));
  const cut = fixture('cohere/stream.sse').split('event: message-end')[0]!;
  t.equal(streamedText(replay(translator, cut)), 'The capital of France is Paris.');
  t.equal(translator.finished, false);
});

t.test('an error inside the stream throws a retryable UpstreamError from event()', async (t) => {
  const start = fixture('cohere/stream.sse').split('\n\n').slice(0, 3).join('\n\n') + '\n\n';
  const ended = 'event: message-end\ndata: {"type":"message-end","delta":{"finish_reason":"ERROR","error":"internal failure"}}\n\n';
  const translator = provider.streamTranslator(context(true));
  const error = rejection(() => replay(translator, start + ended)) as UpstreamError;
  t.ok(isUpstreamError(error));
  t.match(error, { reason: 'stream_error', retryable: true, message: /internal failure/ });
  const bare = rejection(() => replay(provider.streamTranslator(context(true)), 'data: {"message":"too many tokens"}\n\n')) as UpstreamError;
  t.match(bare, { reason: 'stream_error', message: /too many tokens/ });
});

t.test('every error fixture maps through the common status policy', async (t) => {
  const cases: Array<[string, number, Record<string, string>, { status: number; retryable: boolean; retryAfterMs?: number; message: RegExp | string }]> = [
    ['cohere/error-401.json', 401, {}, { status: 502, retryable: false, message: "The cohere provider rejected the gateway's credentials (HTTP 401: invalid api token); check COHERE_API_KEY" }],
    ['cohere/error-401.json', 498, {}, { status: 502, retryable: false, message: /credentials \(HTTP 498: invalid api token\)/ }],
    ['cohere/error-429.json', 429, { 'retry-after': '7' }, { status: 429, retryable: true, retryAfterMs: 7000, message: fixtureJson('cohere/error-429.json').message }],
    ['cohere/error-400.json', 400, {}, { status: 400, retryable: false, message: fixtureJson('cohere/error-400.json').message }],
  ];
  for (const [file, status, headers, expected] of cases) {
    const error = provider.error(status, headers, fixture(file));
    t.match(error, { ...expected, provider: 'cohere', upstreamStatus: status }, `${file} as HTTP ${status}`);
    if (expected.retryAfterMs === undefined) t.equal(error.retryAfterMs, undefined);
  }
  const unavailable = provider.error(503, {}, 'upstream connect error');
  t.match(unavailable, { status: 503, retryable: true, message: 'The cohere provider answered HTTP 503' });
  t.equal(provider.error(401, {}, fixture('cohere/error-401.json')).toBody().error.code, 'provider_auth_error');
});

t.test('the connection test lists chat models, with the key', async (t) => {
  const test = provider.testRequest();
  t.equal(test.method, 'GET');
  t.match(test.url, /^https:\/\/api\.cohere\.com\/v1\/models\?/);
  t.equal(test.headers.authorization, 'Bearer co-key');
  t.equal(cohere.create({ COHERE_BASE_URL: 'https://api.cohere.com' }).configured, false, 'no key, not configured');
});
