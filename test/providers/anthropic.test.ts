// Golden tests of the anthropic adapter (Kong style): OpenAI requests written here must become the
// fixtures' native requests exactly; the fixtures' native responses, streams and errors must become
// the expected OpenAI responses, schema-valid chunks and UpstreamErrors.
import t from 'tap';
import type { ChatRequest } from '../../core/chat-types.js';
import { loadCatalog, type CatalogModel } from '../../core/catalog.js';
import { isGatewayError } from '../../core/errors.js';
import { isUpstreamError, type UpstreamError } from '../../core/upstream-error.js';
import { anthropic } from '../../providers/anthropic/index.js';
import type { TranslateContext } from '../../core/provider.js';
import { JSON_MODE_INSTRUCTION } from '../../providers/anthropic/request.js';
import { fixture, fixtureJson } from '../helpers/fake-provider.js';
import { checkChunk, checkCompletion } from '../helpers/schema.js';
import { replayUntilError, streamedText, toCrlf, withoutCreated } from '../helpers/replay.js';

const catalog = loadCatalog();
const sonnet = catalog.get('anthropic', 'claude-sonnet-4-5')!;
const provider = anthropic.create({ ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_VERSION: '2023-06-01', ANTHROPIC_BASE_URL: 'https://api.anthropic.com/' });
const context = (stream = false, model: CatalogModel = sonnet): TranslateContext => ({ model, stream, requestId: 'req-1' });
const translate = (request: Partial<ChatRequest>, options: { stream?: boolean; model?: CatalogModel } = {}) =>
  JSON.parse(provider.chatRequest({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }], ...request }, context(options.stream, options.model)).body!);
const ask = { model: 'claude-sonnet-4-5', messages: [{ role: 'user' as const, content: 'Hi' }] };

/** The 400 GatewayError the translation refuses `request` with (undefined when it is accepted). */
function refused(request: Partial<ChatRequest>): unknown {
  try {
    translate(request);
    return undefined;
  } catch (error) {
    return isGatewayError(error) ? error : `not a GatewayError: ${String(error)}`;
  }
}
const refusal = (param: string) => ({ status: 400, param, message: `Invalid value for '${param}'` });

t.test('the canonical request becomes request.json, sent to /v1/messages with x-api-key and anthropic-version', async (t) => {
  const upstream = provider.chatRequest(
    {
      model: 'claude-sonnet-4-5',
      messages: [
        { role: 'system', content: 'You are a concise assistant.' },
        { role: 'user', content: 'What is the capital of France?' },
      ],
      temperature: 0.2,
      max_tokens: 1024,
      stop: '\n\nHuman:',
      user: 'user-123',
      seed: 7,
      presence_penalty: 0.5,
      logprobs: false,
      n: 1,
    },
    context(),
  );
  t.equal(upstream.url, 'https://api.anthropic.com/v1/messages');
  t.equal(upstream.method, 'POST');
  t.same(upstream.headers, { 'content-type': 'application/json', accept: 'application/json', 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' });
  t.strictSame(JSON.parse(upstream.body!), fixtureJson('anthropic/request.json'), 'seed, penalties, logprobs: false and n are dropped');
});

t.test('a tool round trip becomes request-tools.json: tool_use blocks, then a tool_result in a user turn', async (t) => {
  const upstream = provider.chatRequest(
    {
      model: 'claude-sonnet-4-5',
      stream: true,
      max_completion_tokens: 1024,
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Get current weather for a city',
            parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
          },
        },
      ],
      tool_choice: 'auto',
      messages: [
        { role: 'user', content: "What's the weather in Paris?" },
        {
          role: 'assistant',
          content: "I'll check the current weather in Paris for you.",
          tool_calls: [{ id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', content: '18C, cloudy' },
      ],
    },
    context(true),
  );
  t.equal(upstream.headers.accept, 'text/event-stream');
  t.strictSame(JSON.parse(upstream.body!), fixtureJson('anthropic/request-tools.json'));
});

t.test('max_tokens defaults to the catalog model output limit when the client sets none', async (t) => {
  t.equal(translate({}).max_tokens, 64000);
  t.equal(translate({ max_tokens: 50, max_completion_tokens: 70 }).max_tokens, 70, 'max_completion_tokens wins');
});

t.test('sampling follows the model: clamped to 0..1, top_p dropped beside temperature, none at all from Claude 4.7 on', async (t) => {
  t.same([translate({ temperature: 1.6 }).temperature], [1]);
  const both = translate({ temperature: 0.3, top_p: 0.9 });
  t.equal(both.temperature, 0.3);
  t.notOk('top_p' in both);
  t.equal(translate({ top_p: 0.9 }).top_p, 0.9);
  const sonnet5 = catalog.get('anthropic', 'claude-sonnet-5')!;
  const opus47 = catalog.get('anthropic', 'claude-opus-4-7')!;
  for (const model of [sonnet5, opus47]) {
    const body = translate({ temperature: 0.2, top_p: 0.5 }, { model });
    t.notOk('temperature' in body || 'top_p' in body, `${model.id} gets no sampling parameters`);
  }
  t.equal(translate({ temperature: 0.2 }, { model: catalog.get('anthropic', 'claude-sonnet-4-6')! }).temperature, 0.2, 'Sonnet 4.6 still takes temperature');
});

t.test('whitespace-only stop sequences are dropped, others kept', async (t) => {
  t.same(translate({ stop: ['\n', 'END', ' '] }).stop_sequences, ['END']);
  t.notOk('stop_sequences' in translate({ stop: ['\n\n'] }));
});

t.test('system and developer messages are hoisted into system, in order', async (t) => {
  const body = translate({
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
    ],
  });
  t.same(body.system, [
    { type: 'text', text: 'Be brief.' },
    { type: 'text', text: 'Answer in French.' },
  ]);
  t.same(body.messages, [{ role: 'user', content: 'Hi' }]);
});

t.test('images: data URLs become base64 sources, http(s) URLs url sources, other types are refused', async (t) => {
  const body = translate({
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Compare' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } },
        ],
      },
    ],
  });
  t.same(body.messages[0].content, [
    { type: 'text', text: 'Compare' },
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
    { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
  ]);
  t.match(refused({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/bmp;base64,Qk0=' } }] }] }), refusal('messages[0].content[0].image_url'));
  t.match(refused({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://example.com/cat.jpg' } }] }] }), refusal('messages[0].content[0].image_url'));
  t.match(refused({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAA=', format: 'wav' } }] }] }), refusal('messages[0].content[0].type'));
});

t.test('a base64 PDF file part becomes a document block', async (t) => {
  const body = translate({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=' } }] }] });
  t.same(body.messages[0].content, [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } }]);
  t.match(refused({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }] }] }), refusal('messages[0].content[0].file'));
});

t.test('tool choices map to auto / any / tool / none, and parallel_tool_calls=false disables parallel use', async (t) => {
  const tools = [{ type: 'function' as const, function: { name: 'f', parameters: { type: 'object' } } }];
  t.same(translate({ tools, tool_choice: 'required' }).tool_choice, { type: 'any' });
  t.same(translate({ tools, tool_choice: 'none' }).tool_choice, { type: 'none' });
  t.same(translate({ tools, tool_choice: { type: 'function', function: { name: 'f' } } }).tool_choice, { type: 'tool', name: 'f' });
  t.same(translate({ tools, parallel_tool_calls: false }).tool_choice, { type: 'auto', disable_parallel_tool_use: true });
  t.notOk('tool_choice' in translate({ tools }), 'no choice: Anthropic defaults to auto');
  t.notOk('tool_choice' in translate({ tool_choice: 'auto' }), 'a choice without tools is dropped');
  t.same(translate({ tools: [{ type: 'function', function: { name: 'g', strict: true } }] }).tools, [{ name: 'g', input_schema: { type: 'object', properties: {} }, strict: true }]);
});

t.test('results of parallel tool calls share one user turn; bad arguments and function messages are refused', async (t) => {
  const body = translate({
    messages: [
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'w', arguments: '{"city":"Paris"}' } },
          { id: 'b', type: 'function', function: { name: 'w', arguments: '' } },
        ],
      },
      { role: 'tool', tool_call_id: 'a', content: 'sunny' },
      { role: 'tool', tool_call_id: 'b', content: [{ type: 'text', text: 'rain' }] },
      { role: 'user', content: 'Thanks' },
    ],
  });
  t.same(body.messages.slice(1), [
    {
      role: 'assistant',
      content: [
        { type: 'tool_use', id: 'a', name: 'w', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'b', name: 'w', input: {} },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'a', content: 'sunny' },
        { type: 'tool_result', tool_use_id: 'b', content: [{ type: 'text', text: 'rain' }] },
        { type: 'text', text: 'Thanks' },
      ],
    },
  ]);
  t.match(refused({ messages: [{ role: 'assistant', tool_calls: [{ id: 'x', type: 'function', function: { name: 'w', arguments: '{nope' } }] }] }), refusal('messages[0].tool_calls[0].function.arguments'));
  t.match(refused({ messages: [{ role: 'function', name: 'w', content: 'x' }] }), refusal('messages[0].role'));
});

t.test('a tool result with no text goes without content, never as an empty text block', async (t) => {
  const call = { id: 'a', type: 'function' as const, function: { name: 'w', arguments: '{}' } };
  const answered = (content: ChatRequest['messages'][number]['content']) =>
    translate({ messages: [{ role: 'user', content: 'Go' }, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: 'a', content }] }).messages[2].content;
  t.strictSame(answered([]), [{ type: 'tool_result', tool_use_id: 'a' }]);
  t.strictSame(answered([{ type: 'text', text: '' }]), [{ type: 'tool_result', tool_use_id: 'a' }]);
  t.strictSame(answered(''), [{ type: 'tool_result', tool_use_id: 'a' }]);
  t.strictSame(answered('done'), [{ type: 'tool_result', tool_use_id: 'a', content: 'done' }]);
});

t.test('response_format: a JSON schema becomes output_config.format, JSON mode a system instruction', async (t) => {
  const schema = { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'], additionalProperties: false };
  const structured = translate({ response_format: { type: 'json_schema', json_schema: { name: 'a', schema, strict: true } } });
  t.same(structured.output_config, { format: { type: 'json_schema', schema } });
  t.notOk('system' in structured);
  const json = translate({ messages: [{ role: 'system', content: 'Be brief.' }, ...ask.messages], response_format: { type: 'json_object' } });
  t.same(json.system, [
    { type: 'text', text: 'Be brief.' },
    { type: 'text', text: JSON_MODE_INSTRUCTION },
  ]);
  t.notOk('output_config' in json);
  t.notOk('system' in translate({ response_format: { type: 'text' } }));
});

t.test('chat.json becomes a schema-valid completion; cache reads are cached_tokens and part of the prompt', async (t) => {
  const completion = provider.chatResponse(fixtureJson('anthropic/chat.json'), context());
  t.equal(checkCompletion(completion), null);
  const { created, ...rest } = completion;
  t.type(created, 'number');
  t.strictSame(rest, {
    id: 'msg_01VdEjxAP5ahtHKrrRdNBteQ',
    object: 'chat.completion',
    model: 'claude-sonnet-4-5-20250929',
    choices: [{ index: 0, message: { role: 'assistant', content: 'The capital of France is Paris.', refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 2067, completion_tokens: 10, total_tokens: 2077, prompt_tokens_details: { cached_tokens: 2048, cache_write_tokens: 0 } },
  });
});

t.test('chat-tool-use.json becomes text plus a tool call with finish_reason tool_calls', async (t) => {
  const completion = provider.chatResponse(fixtureJson('anthropic/chat-tool-use.json'), context());
  t.equal(checkCompletion(completion), null);
  t.strictSame(completion.choices[0], {
    index: 0,
    message: {
      role: 'assistant',
      content: "I'll check the current weather in Paris for you.",
      refusal: null,
      tool_calls: [{ id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }],
    },
    logprobs: null,
    finish_reason: 'tool_calls',
  });
  t.same(completion.usage, { prompt_tokens: 377, completion_tokens: 65, total_tokens: 442, prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 } });
});

t.test('cache writes are cache_write_tokens, thinking tokens reasoning_tokens; stop reasons map per providers.md §5', async (t) => {
  const body = fixtureJson('anthropic/chat.json');
  body.usage = { input_tokens: 5, cache_creation_input_tokens: 1000, cache_read_input_tokens: 0, output_tokens: 300, output_tokens_details: { thinking_tokens: 250 } };
  t.same(provider.chatResponse(body, context()).usage, {
    prompt_tokens: 1005,
    completion_tokens: 300,
    total_tokens: 1305,
    prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 1000 },
    completion_tokens_details: { reasoning_tokens: 250 },
  });
  const cases: Array<[string, string]> = [
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['something_new', 'stop'],
  ];
  for (const [native, openai] of cases) t.equal(provider.chatResponse({ ...body, stop_reason: native }, context()).choices[0]!.finish_reason, openai, native);
});

t.test('a body that is not a message is a retryable bad response', async (t) => {
  let thrown: unknown;
  try {
    provider.chatResponse({ type: 'error' }, context());
  } catch (error) {
    thrown = error;
  }
  t.ok(isUpstreamError(thrown));
  t.match(thrown, { reason: 'bad_response', status: 502, retryable: true, message: /invalid response/ });
});

const streamChunks = [
  { delta: { role: 'assistant', content: '' }, finish_reason: null },
  { delta: { content: 'The capital' }, finish_reason: null },
  { delta: { content: ' of France' }, finish_reason: null },
  { delta: { content: ' is Paris.' }, finish_reason: null },
  { delta: {}, finish_reason: 'stop' },
].map((choice) => ({ id: 'msg_01QC4g3HwBThD4BaNtBckFDJ', object: 'chat.completion.chunk', model: 'claude-sonnet-4-5-20250929', choices: [{ index: 0, ...choice }] }));
const streamUsage = { prompt_tokens: 2067, completion_tokens: 10, total_tokens: 2077, prompt_tokens_details: { cached_tokens: 2048, cache_write_tokens: 0 } };

for (const [framing, transcript] of [
  ['LF', fixture('anthropic/stream.sse')],
  ['CRLF', toCrlf(fixture('anthropic/stream.sse'))],
] as const) {
  t.test(`stream.sse (${framing}) becomes role, text, finish and usage chunks, each schema-valid`, async (t) => {
    for (const pieceSize of [transcript.length, 7]) {
      const translator = provider.streamTranslator(context(true));
      const { chunks, error } = replayUntilError(translator, transcript, pieceSize);
      t.equal(error, undefined);
      for (const chunk of chunks) t.equal(checkChunk(chunk), null);
      t.strictSame(withoutCreated(chunks), [
        ...streamChunks,
        { id: 'msg_01QC4g3HwBThD4BaNtBckFDJ', object: 'chat.completion.chunk', model: 'claude-sonnet-4-5-20250929', choices: [], usage: streamUsage },
      ]);
      t.equal(translator.finished, true, 'message_stop finishes the answer');
      t.same(translator.usage, streamUsage);
    }
  });
}

t.test('stream-tool-use.sse becomes one tool call at index 0 whose arguments assemble to the input', async (t) => {
  const translator = provider.streamTranslator(context(true));
  const { chunks, error } = replayUntilError(translator, fixture('anthropic/stream-tool-use.sse'));
  t.equal(error, undefined);
  for (const chunk of chunks) t.equal(checkChunk(chunk), null);
  t.equal(streamedText(chunks), "I'll check the current weather in Paris for you.");
  const calls = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
  t.same(calls[0], { index: 0, id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', type: 'function', function: { name: 'get_weather', arguments: '' } });
  t.ok(calls.every((call) => call.index === 0));
  t.equal(calls.map((call) => call.function?.arguments ?? '').join(''), '{"location": "Paris"}');
  t.same(chunks.at(-2)!.choices, [{ index: 0, delta: {}, finish_reason: 'tool_calls' }]);
  t.equal(chunks.at(-1)!.usage?.completion_tokens, 65);
  t.equal(translator.finished, true);
});

t.test('an error event in the stream throws a retryable UpstreamError after the content before it', async (t) => {
  const translator = provider.streamTranslator(context(true));
  const { chunks, error } = replayUntilError(translator, fixture('anthropic/stream-error-overloaded.sse'));
  t.equal(streamedText(chunks), 'The capital');
  t.ok(isUpstreamError(error));
  t.match(error, { reason: 'stream_error', upstreamStatus: 200, status: 503, retryable: true, message: 'Overloaded', type: 'overloaded_error' });
});

t.test('a stream that ends before message_delta has not finished (core reports it truncated)', async (t) => {
  const cut = fixture('anthropic/stream.sse').split('event: content_block_stop')[0]!;
  const translator = provider.streamTranslator(context(true));
  const { chunks, error } = replayUntilError(translator, cut);
  t.equal(error, undefined);
  t.equal(streamedText(chunks), 'The capital of France is Paris.');
  t.equal(translator.finished, false);
  t.notOk(chunks.some((chunk) => chunk.usage), 'no usage chunk for an unfinished answer');
});

t.test('every error fixture maps through the common status policy', async (t) => {
  const cases: Array<[string, number, Partial<UpstreamError>]> = [
    ['error-400.json', 400, { status: 400, retryable: false, message: 'prompt is too long: 205351 tokens > 200000 maximum', type: 'invalid_request_error' }],
    ['error-401.json', 401, { status: 502, retryable: false, code: 'provider_auth_error' }],
    ['error-404.json', 404, { status: 404, retryable: false, message: 'model: claude-does-not-exist' }],
    ['error-429.json', 429, { status: 429, retryable: true, retryAfterMs: 7000, type: 'rate_limit_error' }],
    ['error-500.json', 500, { status: 503, retryable: true, message: 'Internal server error' }],
    ['error-529.json', 529, { status: 503, retryable: true, message: 'Overloaded', type: 'overloaded_error' }],
  ];
  for (const [file, status, expected] of cases) {
    const error = provider.error(status, status === 429 ? { 'retry-after': '7' } : {}, fixture(`anthropic/${file}`));
    t.ok(isUpstreamError(error), file);
    t.match(error, { provider: 'anthropic', reason: 'http_status', upstreamStatus: status, ...expected }, file);
  }
  const auth = provider.error(401, {}, fixture('anthropic/error-401.json'));
  t.match(auth.message, /rejected the gateway's credentials.*invalid x-api-key/);
  t.equal(provider.error(529, {}, fixture('anthropic/error-529.json')).retryAfterMs, undefined);
});

t.test('a 429 for the monthly spend limit and a billing error are the gateway account problems, not retried', async (t) => {
  const spend = { type: 'error', error: { type: 'rate_limit_error', message: 'You have reached your specified API usage limits.', details: { error_code: 'enforced_spend_limit_reached' } } };
  t.match(provider.error(429, { 'retry-after': '60' }, JSON.stringify(spend)), { status: 502, retryable: false, code: 'enforced_spend_limit_reached' });
  const billing = { type: 'error', error: { type: 'billing_error', message: 'Your credit balance is too low.' } };
  t.match(provider.error(402, {}, JSON.stringify(billing)), { status: 502, retryable: false, code: 'provider_billing_error' });
  t.match(provider.error(502, {}, '<html>Bad Gateway</html>'), { status: 503, retryable: true, message: 'The anthropic provider answered HTTP 502' });
});

t.test('the connection test lists one model with the same credentials', async (t) => {
  const test = provider.testRequest();
  t.equal(test.method, 'GET');
  t.equal(test.url, 'https://api.anthropic.com/v1/models?limit=1');
  t.equal(test.headers['x-api-key'], 'sk-ant-test');
  t.equal(anthropic.create({ ANTHROPIC_VERSION: '2023-06-01', ANTHROPIC_BASE_URL: 'https://api.anthropic.com' }).configured, false, 'no key, not configured');
});
