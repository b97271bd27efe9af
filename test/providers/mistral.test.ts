// Golden tests of the mistral adapter (Kong style): an OpenAI request written here must become exactly
// the native request fixture; each native response and stream transcript must come back as the
// OpenAI response and chunks a client expects (schema-valid); each error body maps to a status.
import t from 'tap';
import { mistral } from '../../providers/mistral/index.js';
import { loadCatalog, type CatalogModel } from '../../core/catalog.js';
import type { ChatRequest } from '../../core/chat-types.js';
import { isUpstreamError, type UpstreamError } from '../../core/upstream-error.js';
import type { TranslateContext } from '../../core/provider.js';
import { fixture, fixtureJson } from '../helpers/fake-provider.js';
import { checkChunk, checkCompletion } from '../helpers/schema.js';
import { replay, streamedText, toCrlf } from '../helpers/replay.js';
import { rejection } from '../helpers/rejection.js';

const provider = mistral.create({ MISTRAL_API_KEY: 'mi-key', MISTRAL_BASE_URL: 'https://api.mistral.ai' });
const catalog = loadCatalog();
const model = catalog.get('mistral', 'mistral-small-latest')!;
const context = (stream = false, m: CatalogModel = model): TranslateContext => ({ model: m, stream, requestId: 'req-1' });
const translate = (request: ChatRequest, stream = false, m?: CatalogModel) => JSON.parse(provider.chatRequest(request, context(stream, m)).body!);

const simple: ChatRequest = {
  model: 'mistral-small-latest',
  messages: [
    { role: 'system', content: 'You are a concise assistant.' },
    { role: 'user', content: 'What is the capital of France?' },
  ],
  temperature: 0.2,
  top_p: 1,
  max_tokens: 64,
  stop: ['\n\n\n'],
  seed: 42,
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
  model: 'mistral/mistral-small-latest',
  stream: true,
  stream_options: { include_usage: true },
  messages: [
    { role: 'user', content: "What's the weather in San Francisco?" },
    { role: 'assistant', content: null, tool_calls: [{ id: 'gSIMJiOkT', type: 'function', function: { name: 'weather', arguments: '{"location": "San Francisco"}' } }] },
    { role: 'tool', tool_call_id: 'gSIMJiOkT', content: '{"temperature_c":18,"condition":"foggy"}' },
  ],
  tools: [weatherTool],
  tool_choice: 'auto',
  parallel_tool_calls: true,
};

t.test('the canonical request becomes request.json: random_seed, no user or n', async (t) => {
  t.strictSame(translate(simple), fixtureJson('mistral/request.json'));
  const upstream = provider.chatRequest(simple, context());
  t.equal(upstream.url, 'https://api.mistral.ai/v1/chat/completions');
  t.equal(upstream.headers.authorization, 'Bearer mi-key');
  t.equal(upstream.headers.accept, 'application/json');
});

t.test('a tool round trip becomes request-tools.json: "" content, the function name on the result, no stream_options', async (t) => {
  t.strictSame(translate(withToolResult, true), fixtureJson('mistral/request-tools.json'));
  t.equal(provider.chatRequest(withToolResult, context(true)).headers.accept, 'text/event-stream');
});

t.test('only fields Mistral declares are sent', async (t) => {
  const body = translate({
    ...simple,
    max_completion_tokens: 99,
    presence_penalty: 0.5,
    frequency_penalty: -0.5,
    prediction: { type: 'content', content: 'Paris' },
    metadata: { team: 'a' },
    store: true,
    service_tier: 'auto',
    reasoning_effort: 'low',
    stream_options: { include_usage: true },
    parallel_tool_calls: false,
    tool_choice: 'required',
  });
  t.equal(body.max_tokens, 99, 'max_completion_tokens wins over max_tokens');
  t.equal(body.presence_penalty, 0.5);
  t.equal(body.frequency_penalty, -0.5);
  t.strictSame(body.prediction, { type: 'content', content: 'Paris' });
  for (const field of ['metadata', 'store', 'service_tier', 'reasoning_effort', 'stream_options', 'seed', 'user', 'n', 'max_completion_tokens']) {
    t.notOk(field in body, `${field} is not sent`);
  }
  t.notOk('tool_choice' in body || 'parallel_tool_calls' in body, 'no tools, no tool settings');
});

t.test('tool_choice "required" is "any"; named and none pass; tools without parameters get an empty schema', async (t) => {
  const bare = { type: 'function' as const, function: { name: 'now' } };
  t.equal(translate({ ...simple, tools: [weatherTool], tool_choice: 'required' }).tool_choice, 'any');
  t.equal(translate({ ...simple, tools: [weatherTool], tool_choice: 'none' }).tool_choice, 'none');
  t.strictSame(translate({ ...simple, tools: [weatherTool], tool_choice: { type: 'function', function: { name: 'weather' } } }).tool_choice, { type: 'function', function: { name: 'weather' } });
  t.strictSame(translate({ ...simple, tools: [bare] }).tools, [{ type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } }]);
});

t.test('JSON mode and JSON schema keep OpenAI shapes, limited to declared fields', async (t) => {
  const schema = { type: 'object', properties: { city: { type: 'string' } } };
  t.strictSame(translate({ ...simple, response_format: { type: 'json_object' } }).response_format, { type: 'json_object' });
  t.strictSame(translate({ ...simple, response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } } }).response_format, {
    type: 'json_schema',
    json_schema: { name: 'answer', schema, strict: true },
  });
});

t.test('developer is system; images pass as image_url for a vision model and are refused otherwise', async (t) => {
  const image = { type: 'image_url' as const, image_url: { url: 'https://example.com/cat.png' } };
  const body = translate({ ...simple, messages: [{ role: 'developer', content: 'Be brief.' }, { role: 'user', content: [{ type: 'text', text: 'What is it?' }, image] }] });
  t.strictSame(body.messages, [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: [{ type: 'text', text: 'What is it?' }, image] },
  ]);
  const codestral = catalog.get('mistral', 'codestral-latest')!;
  t.match(rejection(() => translate({ ...simple, messages: [{ role: 'user', content: [image] }] }, false, codestral)), { status: 400, param: 'messages[0].content[0]' });
});

t.test('what Mistral cannot honour is refused with 400 naming the parameter', async (t) => {
  t.match(rejection(() => translate({ ...simple, logprobs: true })), { status: 400, param: 'logprobs' });
  t.match(rejection(() => translate({ ...simple, audio: { voice: 'alloy', format: 'mp3' } })), { status: 400, param: 'audio' });
  t.match(rejection(() => translate({ ...simple, messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'f' } }] }] })), { status: 400, param: 'messages[0].content[0]' });
});

t.test('chat.json comes back as a schema-valid completion', async (t) => {
  const completion = provider.chatResponse(fixtureJson('mistral/chat.json'), context());
  t.equal(checkCompletion(completion), null);
  t.equal(completion.id, '5319bd0299614c679a0068a4f2c8ffd0');
  t.equal(completion.choices[0]!.message.content, 'The capital of France is Paris.');
  t.equal(completion.choices[0]!.finish_reason, 'stop');
  t.notOk('tool_calls' in completion.choices[0]!.message, 'tool_calls: null is not passed on');
  t.strictSame(completion.usage, { prompt_tokens: 13, completion_tokens: 8, total_tokens: 21 });
});

t.test('chat-tool-call.json gets type "function" and null content', async (t) => {
  const completion = provider.chatResponse(fixtureJson('mistral/chat-tool-call.json'), context());
  t.equal(checkCompletion(completion), null);
  t.equal(completion.choices[0]!.message.content, null);
  t.strictSame(completion.choices[0]!.message.tool_calls, [{ id: 'gSIMJiOkT', type: 'function', function: { name: 'weather', arguments: '{"location": "San Francisco"}' } }]);
  t.equal(completion.choices[0]!.finish_reason, 'tool_calls');
});

t.test('finish reasons: model_length is length; error is a failed attempt; cached tokens are read', async (t) => {
  const base = fixtureJson('mistral/chat.json');
  const finishing = (finish: string) => provider.chatResponse({ ...base, choices: [{ ...base.choices[0], finish_reason: finish }] }, context());
  t.equal(finishing('model_length').choices[0]!.finish_reason, 'length');
  t.equal(finishing('length').choices[0]!.finish_reason, 'length');
  t.match(rejection(() => finishing('error')), { retryable: true, status: 502 });
  const cached = provider.chatResponse({ ...base, usage: { ...base.usage, prompt_tokens_details: { cached_tokens: 5 } } }, context());
  t.equal(cached.usage?.prompt_tokens_details?.cached_tokens, 5);
  const legacy = provider.chatResponse({ ...base, usage: { ...base.usage, num_cached_tokens: 4 } }, context());
  t.equal(legacy.usage?.prompt_tokens_details?.cached_tokens, 4);
  const thinking = provider.chatResponse({ ...base, choices: [{ ...base.choices[0], message: { role: 'assistant', content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'hmm' }] }, { type: 'text', text: 'Paris.' }] } }] }, context());
  t.equal(thinking.choices[0]!.message.content, 'Paris.', 'thinking chunks are not the answer');
});

for (const [framing, transform] of [['LF', (s: string) => s], ['CRLF', toCrlf]] as const) {
  t.test(`stream.sse (${framing}): text, finish without usage, then OpenAI's usage chunk`, async (t) => {
    const translator = provider.streamTranslator(context(true));
    const chunks = replay(translator, transform(fixture('mistral/stream.sse')));
    for (const chunk of chunks) t.equal(checkChunk(chunk), null);
    t.equal(chunks[0]!.choices[0]!.delta.role, 'assistant');
    t.equal(streamedText(chunks), 'The capital of France is Paris.');
    const finish = chunks.at(-2)!;
    t.equal(finish.choices[0]!.finish_reason, 'stop');
    t.equal(finish.usage, undefined, 'usage moves off the finish chunk');
    t.strictSame(chunks.at(-1)!.choices, []);
    t.strictSame(chunks.at(-1)!.usage, { prompt_tokens: 13, completion_tokens: 8, total_tokens: 21 });
    t.equal(translator.finished, true);
  });

  t.test(`stream-tool-call.sse (${framing}): the whole tool call gets index 0 and type`, async (t) => {
    const translator = provider.streamTranslator(context(true));
    const chunks = replay(translator, transform(fixture('mistral/stream-tool-call.sse')));
    for (const chunk of chunks) t.equal(checkChunk(chunk), null);
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    t.strictSame(calls, [{ index: 0, id: 'gSIMJiOkT', type: 'function', function: { name: 'weather', arguments: '{"location": "San Francisco"}' } }]);
    t.equal(chunks.find((c) => c.choices[0]?.finish_reason)!.choices[0]!.finish_reason, 'tool_calls');
    t.strictSame(translator.usage, { prompt_tokens: 124, completion_tokens: 22, total_tokens: 146 });
    t.equal(translator.finished, true);
  });
}

t.test('several tool calls in one stream get their own indexes, repeated ids keep theirs', async (t) => {
  const chunk = (calls: unknown[], finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'mistral-small-latest', choices: [{ index: 0, delta: { tool_calls: calls }, finish_reason: finish }] })}\n\n`;
  const transcript =
    chunk([{ id: 'aaaaaaaaa', function: { name: 'weather', arguments: '{"location":"Paris"}' } }]) +
    chunk([{ id: 'bbbbbbbbb', function: { name: 'weather', arguments: '{"location":' } }]) +
    chunk([{ id: 'bbbbbbbbb', function: { name: 'weather', arguments: '"Rome"}' } }], 'tool_calls') +
    'data: [DONE]\n\n';
  const calls = replay(provider.streamTranslator(context(true)), transcript).flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
  t.strictSame(
    calls.map((call) => [call.index, call.id]),
    [
      [0, 'aaaaaaaaa'],
      [1, 'bbbbbbbbb'],
      [1, undefined],
    ],
  );
});

t.test("calls that carry Mistral's own index as well as an id are counted without gaps", async (t) => {
  const chunk = (calls: unknown[], finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'mistral-small-latest', choices: [{ index: 0, delta: { tool_calls: calls }, finish_reason: finish }] })}\n\n`;
  const transcript =
    chunk([
      { id: 'aaaaaaaaa', index: 0, function: { name: 'weather', arguments: '{"location":"Paris"}' } },
      { id: 'bbbbbbbbb', index: 1, function: { name: 'weather', arguments: '{"location":"Rome"}' } },
    ], 'tool_calls') + 'data: [DONE]\n\n';
  const calls = replay(provider.streamTranslator(context(true)), transcript).flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
  t.strictSame(calls.map((call) => [call.index, call.id]), [[0, 'aaaaaaaaa'], [1, 'bbbbbbbbb']]);
});

t.test('a stream without [DONE] is finished only if the finish chunk came', async (t) => {
  const events = fixture('mistral/stream.sse').split('\n\n');
  const withoutDone = provider.streamTranslator(context(true));
  const chunks = replay(withoutDone, events.slice(0, -2).join('\n\n') + '\n\n');
  t.equal(withoutDone.finished, true);
  t.ok(chunks.at(-1)!.usage, 'the usage chunk still comes last');
  const cut = provider.streamTranslator(context(true));
  replay(cut, events.slice(0, 3).join('\n\n') + '\n\n');
  t.equal(cut.finished, false);
});

t.test('an error object inside the stream throws a retryable UpstreamError from event()', async (t) => {
  const error = rejection(() =>
    replay(provider.streamTranslator(context(true)), 'data: {"object":"error","message":"Service tier capacity exceeded for this model.","type":"invalid_request_error","param":null,"code":null}\n\n'),
  ) as UpstreamError;
  t.ok(isUpstreamError(error));
  t.match(error, { reason: 'stream_error', retryable: true, message: /capacity exceeded/ });
  t.match(rejection(() => replay(provider.streamTranslator(context(true)), 'data: not json\n\n')), { reason: 'bad_response' });
});

t.test('every error fixture maps through the common status policy', async (t) => {
  const cases: Array<[string, number, Record<string, string>, { status: number; retryable: boolean; retryAfterMs?: number; message: RegExp | string }]> = [
    ['mistral/error-401.json', 401, {}, { status: 502, retryable: false, message: /rejected the gateway's credentials \(HTTP 401\)/ }],
    ['mistral/error-401-legacy.json', 401, {}, { status: 502, retryable: false, message: /rejected the gateway's credentials \(HTTP 401\)/ }],
    ['mistral/error-429.json', 429, { 'retry-after': '3' }, { status: 429, retryable: true, retryAfterMs: 3000, message: 'Rate limit exceeded' }],
    ['mistral/error-429-legacy.json', 429, {}, { status: 429, retryable: true, message: 'Requests rate limit exceeded' }],
    ['mistral/error-422.json', 422, {}, { status: 422, retryable: false, message: 'The mistral provider rejected the request: messages: Field required' }],
    ['mistral/error-400.json', 400, {}, { status: 503, retryable: true, message: 'Service tier capacity exceeded for this model.' }],
    ['mistral/error-400.json', 503, { 'retry-after-ms': '250' }, { status: 503, retryable: true, retryAfterMs: 250, message: 'Service tier capacity exceeded for this model.' }],
  ];
  for (const [file, status, headers, expected] of cases) {
    const error = provider.error(status, headers, fixture(file));
    t.match(error, { ...expected, provider: 'mistral', upstreamStatus: status }, `${file} as HTTP ${status}`);
    if (expected.retryAfterMs === undefined) t.equal(error.retryAfterMs, undefined, `${file}: no Retry-After`);
  }
  t.equal(provider.error(429, {}, fixture('mistral/error-429.json')).code, '1300', "Mistral's code is kept");
  const plain = provider.error(400, {}, '{"object":"error","message":"Invalid model: nope","type":"invalid_request_error","param":null,"code":"1500"}');
  t.match(plain, { status: 400, retryable: false, message: 'Invalid model: nope' });
});
