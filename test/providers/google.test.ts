// Golden tests of the google (Gemini) adapter (Kong style): OpenAI requests written here must become
// the fixtures' native requests exactly; the fixtures' native responses, streams (CRLF-framed, and
// LF) and errors must become the expected OpenAI responses, schema-valid chunks and UpstreamErrors.
import t from 'tap';
import type { ChatRequest } from '../../core/chat-types.js';
import { loadCatalog, type CatalogModel } from '../../core/catalog.js';
import { isGatewayError } from '../../core/errors.js';
import { isUpstreamError } from '../../core/upstream-error.js';
import { google } from '../../providers/google/index.js';
import type { TranslateContext } from '../../core/provider.js';
import { SKIP_SIGNATURE } from '../../providers/google/request.js';
import { fixture, fixtureJson } from '../helpers/fake-provider.js';
import { checkChunk, checkCompletion } from '../helpers/schema.js';
import { replayUntilError, streamedText, toLf, withoutCreated } from '../helpers/replay.js';

const catalog = loadCatalog();
const flash = catalog.get('google', 'gemini-2.5-flash')!;
const flash20 = catalog.get('google', 'gemini-2.0-flash')!;
const gemini3 = catalog.get('google', 'gemini-3-flash-preview')!;
const provider = google.create({ GOOGLE_API_KEY: 'gm-test-key', GOOGLE_BASE_URL: 'https://generativelanguage.googleapis.com' });
const context = (stream = false, model: CatalogModel = flash): TranslateContext => ({ model, stream, requestId: 'req-1' });
const translate = (request: Partial<ChatRequest>, model: CatalogModel = flash) =>
  JSON.parse(provider.chatRequest({ model: model.id, messages: [{ role: 'user', content: 'Hi' }], ...request }, context(false, model)).body!);

/** The 400 GatewayError the translation refuses `request` with (undefined when it is accepted). */
function refused(request: Partial<ChatRequest>, model?: CatalogModel): unknown {
  try {
    translate(request, model);
    return undefined;
  } catch (error) {
    return isGatewayError(error) ? error : `not a GatewayError: ${String(error)}`;
  }
}
const refusal = (param: string) => ({ status: 400, param, message: `Invalid value for '${param}'` });

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'weather',
    description: 'Get current weather for a location',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};
const weatherCall = { id: 'call_req0_0', type: 'function' as const, function: { name: 'weather', arguments: '{"location":"San Francisco"}' } };

t.test('the canonical request becomes request.json, sent to :generateContent with x-goog-api-key', async (t) => {
  const upstream = provider.chatRequest(
    {
      model: 'gemini-2.5-flash',
      messages: [
        { role: 'system', content: 'You are a concise assistant.' },
        { role: 'user', content: 'What is the capital of France?' },
      ],
      temperature: 0.2,
      top_p: 0.95,
      max_tokens: 64,
      stop: ['\n\n\n'],
      n: 1,
      user: 'user-123',
      parallel_tool_calls: false,
      presence_penalty: 0.4,
      logprobs: false,
    },
    context(),
  );
  t.equal(upstream.url, 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent');
  t.same(upstream.headers, { 'content-type': 'application/json', accept: 'application/json', 'x-goog-api-key': 'gm-test-key' });
  t.strictSame(JSON.parse(upstream.body!), fixtureJson('gemini/request.json'), 'user, parallel_tool_calls, penalties and logprobs: false are dropped');
});

t.test('a tool round trip becomes request-tools.json, streamed from :streamGenerateContent?alt=sse', async (t) => {
  const upstream = provider.chatRequest(
    {
      model: 'gemini-2.5-flash',
      stream: true,
      tools: [weatherTool],
      tool_choice: 'auto',
      messages: [
        { role: 'user', content: "What's the weather in San Francisco?" },
        { role: 'assistant', content: null, tool_calls: [weatherCall] },
        { role: 'tool', tool_call_id: 'call_req0_0', content: '{"temperature_c":18,"condition":"foggy"}' },
      ],
    },
    context(true),
  );
  t.equal(upstream.url, 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
  t.equal(upstream.headers.accept, 'text/event-stream');
  t.strictSame(JSON.parse(upstream.body!), fixtureJson('gemini/request-tools.json'));
});

t.test('GOOGLE_PROJECT_ID is sent as x-goog-user-project', async (t) => {
  const withProject = google.create({ GOOGLE_API_KEY: 'k', GOOGLE_PROJECT_ID: 'my-project', GOOGLE_BASE_URL: 'https://generativelanguage.googleapis.com/' });
  t.equal(withProject.chatRequest({ model: 'x', messages: [{ role: 'user', content: 'Hi' }] }, context()).headers['x-goog-user-project'], 'my-project');
  t.equal(withProject.testRequest().url, 'https://generativelanguage.googleapis.com/v1beta/models?pageSize=1');
  t.equal(google.create({ GOOGLE_BASE_URL: 'https://x' }).configured, false, 'no key, not configured');
});

t.test('tool results are named after the nearest earlier call with their id; non-object results go under "output"', async (t) => {
  const body = translate({
    messages: [
      { role: 'user', content: 'Weather and time in Paris?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"location":"Paris"}' } },
          { id: 'c2', type: 'function', function: { name: 'clock', arguments: '' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c2', content: '"12:00"' },
      { role: 'tool', tool_call_id: 'c1', content: 'rainy, 9C' },
    ],
  });
  t.same(body.contents.slice(1), [
    {
      role: 'model',
      parts: [{ text: 'Checking.' }, { functionCall: { name: 'weather', args: { location: 'Paris' } } }, { functionCall: { name: 'clock', args: {} } }],
    },
    {
      role: 'user',
      parts: [{ functionResponse: { name: 'clock', response: { output: '12:00' } } }, { functionResponse: { name: 'weather', response: { output: 'rainy, 9C' } } }],
    },
  ]);
  const reused = translate({
    messages: [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', tool_calls: [{ id: 'same', type: 'function', function: { name: 'weather', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'same', content: '{"sky":"grey"}' },
      { role: 'assistant', tool_calls: [{ id: 'same', type: 'function', function: { name: 'clock', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'same', content: '{"time":"noon"}' },
    ],
  });
  t.same(
    reused.contents.filter((c: { role: string }, i: number) => i > 0 && c.role === 'user').map((c: { parts: Array<{ functionResponse: { name: string } }> }) => c.parts[0]!.functionResponse.name),
    ['weather', 'clock'],
    'a repeated id is matched to the nearest earlier call',
  );
  t.match(refused({ messages: [{ role: 'tool', tool_call_id: 'nowhere', content: 'x' }] }), refusal('messages[0].tool_call_id'));
  t.match(refused({ messages: [{ role: 'function', name: 'f', content: 'x' }] }), refusal('messages[0].role'));
});

t.test('a thought signature returned with a tool call goes back on its functionCall; Gemini 3 gets the skip placeholder otherwise', async (t) => {
  const signed = { ...weatherCall, extra_content: { google: { thought_signature: 'c2lnbmF0dXJl' } } };
  const history = (call: object) => ({ messages: [{ role: 'user' as const, content: 'Weather?' }, { role: 'assistant' as const, content: null, tool_calls: [call as typeof weatherCall] }] });
  t.equal(translate(history(signed)).contents[1].parts[0].thoughtSignature, 'c2lnbmF0dXJl');
  t.notOk('thoughtSignature' in translate(history(weatherCall)).contents[1].parts[0], 'Gemini 2.5 needs none');
  t.equal(translate(history(weatherCall), gemini3).contents[1].parts[0].thoughtSignature, SKIP_SIGNATURE);
});

t.test('images and audio: data URLs become inlineData, http(s) URLs fileData', async (t) => {
  const body = translate({
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Describe' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.webp?size=2' } },
          { type: 'image_url', image_url: { url: 'https://example.com/photo' } },
          { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
        ],
      },
    ],
  });
  t.same(body.contents[0].parts, [
    { text: 'Describe' },
    { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
    { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/cat.webp?size=2' } },
    { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/photo' } },
    { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
  ]);
  t.match(refused({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'file:///etc/passwd' } }] }] }), refusal('messages[0].content[0].image_url'));
  t.match(refused({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }] }), refusal('messages[0].content[0].file'));
});

t.test('tool choices map to AUTO / ANY / NONE / ANY with one allowed name', async (t) => {
  const tools = [weatherTool];
  t.same(translate({ tools, tool_choice: 'required' }).toolConfig, { functionCallingConfig: { mode: 'ANY' } });
  t.same(translate({ tools, tool_choice: 'none' }).toolConfig, { functionCallingConfig: { mode: 'NONE' } });
  t.same(translate({ tools, tool_choice: { type: 'function', function: { name: 'weather' } } }).toolConfig, {
    functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['weather'] },
  });
  t.notOk('toolConfig' in translate({ tools }));
  t.notOk('toolConfig' in translate({ tool_choice: 'required' }), 'a choice without tools is dropped');
});

t.test('tool parameters go as the Schema subset when expressible, else verbatim as parametersJsonSchema', async (t) => {
  const nullable = { type: 'object', properties: { unit: { type: ['string', 'null'], enum: ['C', 'F'] }, days: { type: 'array', items: { type: 'integer' } } }, additionalProperties: false, $schema: 'x' };
  t.same(translate({ tools: [{ type: 'function', function: { name: 'f', parameters: nullable } }] }).tools[0].functionDeclarations[0], {
    name: 'f',
    parameters: { type: 'OBJECT', properties: { unit: { type: 'STRING', nullable: true, enum: ['C', 'F'] }, days: { type: 'ARRAY', items: { type: 'INTEGER' } } } },
  });
  const withRef = { type: 'object', properties: { a: { $ref: '#/$defs/A' } }, $defs: { A: { type: 'string' } } };
  t.same(translate({ tools: [{ type: 'function', function: { name: 'g', parameters: withRef } }] }).tools[0].functionDeclarations[0], { name: 'g', parametersJsonSchema: withRef });
  t.same(translate({ tools: [{ type: 'function', function: { name: 'h' } }] }).tools[0].functionDeclarations[0], { name: 'h' }, 'no parameters, none sent');
  const noArguments = { type: 'object', properties: {}, required: [] };
  t.same(translate({ tools: [{ type: 'function', function: { name: 'i', parameters: noArguments } }] }).tools[0].functionDeclarations[0], { name: 'i' }, 'an empty OBJECT is a 400 on Gemini: omitted');
  const freeForm = { type: 'object', properties: { options: { type: 'object' } } };
  t.same(translate({ tools: [{ type: 'function', function: { name: 'j', parameters: freeForm } }] }).tools[0].functionDeclarations[0], { name: 'j', parametersJsonSchema: freeForm });
});

t.test('response_format: JSON mode sets the MIME type, a schema goes as responseJsonSchema (Schema subset before 2.5)', async (t) => {
  t.same(translate({ response_format: { type: 'json_object' } }).generationConfig, { responseMimeType: 'application/json' });
  const schema = { type: 'object', properties: { b: { type: 'number' }, a: { type: 'string' } }, required: ['b', 'a'], additionalProperties: false };
  t.same(translate({ response_format: { type: 'json_schema', json_schema: { name: 's', schema, strict: true } } }).generationConfig, {
    responseMimeType: 'application/json',
    responseJsonSchema: schema,
  });
  t.same(translate({ response_format: { type: 'json_schema', json_schema: { name: 's', schema } } }, flash20).generationConfig, {
    responseMimeType: 'application/json',
    responseSchema: { type: 'OBJECT', properties: { b: { type: 'NUMBER' }, a: { type: 'STRING' } }, propertyOrdering: ['b', 'a'], required: ['b', 'a'] },
  });
  const union = { type: 'object', properties: { v: { oneOf: [{ type: 'string' }, { type: 'number' }] } } };
  t.match(refused({ response_format: { type: 'json_schema', json_schema: { name: 's', schema: union } } }, flash20), refusal('response_format.json_schema.schema'));
});

t.test('seed is mapped; penalties only reach models before 2.5, which still accept them', async (t) => {
  t.same(translate({ seed: 42, presence_penalty: 0.5, frequency_penalty: 0.2 }).generationConfig, { seed: 42 });
  t.same(translate({ presence_penalty: 0.5, frequency_penalty: 0.2 }, flash20).generationConfig, { presencePenalty: 0.5, frequencyPenalty: 0.2 });
  t.equal(translate({ max_tokens: 10, max_completion_tokens: 20 }).generationConfig.maxOutputTokens, 20, 'max_completion_tokens wins');
});

t.test('chat.json becomes a schema-valid completion; thoughts are reasoning tokens inside completion tokens', async (t) => {
  const completion = provider.chatResponse(fixtureJson('gemini/chat.json'), context());
  t.equal(checkCompletion(completion), null);
  const { created, ...rest } = completion;
  t.type(created, 'number');
  t.strictSame(rest, {
    id: 'Un6LacrVMcjUxs0PmJfWoQc',
    object: 'chat.completion',
    model: 'gemini-2.5-flash',
    choices: [{ index: 0, message: { role: 'assistant', content: 'The capital of France is Paris.', refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 14, completion_tokens: 47, total_tokens: 61, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 40 } },
  });
});

t.test('chat-function-call.json becomes a tool call with a synthesized id and finish_reason tool_calls', async (t) => {
  const completion = provider.chatResponse(fixtureJson('gemini/chat-function-call.json'), context());
  t.equal(checkCompletion(completion), null);
  t.strictSame(completion.choices[0], {
    index: 0,
    message: { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'call_req1_0', type: 'function', function: { name: 'weather', arguments: '{"location":"San Francisco"}' } }] },
    logprobs: null,
    finish_reason: 'tool_calls',
  });
  t.same(completion.usage, { prompt_tokens: 29, completion_tokens: 60, total_tokens: 89, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 45 } });

  const signed = fixtureJson('gemini/chat-function-call.json');
  signed.candidates[0].content.parts[0].thoughtSignature = 'c2ln';
  t.same(provider.chatResponse(signed, context()).choices[0]!.message.tool_calls![0], {
    id: 'call_req1_0',
    type: 'function',
    function: { name: 'weather', arguments: '{"location":"San Francisco"}' },
    extra_content: { google: { thought_signature: 'c2ln' } },
  });
});

t.test('finish reasons map per providers.md §5; a blocked prompt is content_filter; cached and tool-use prompt tokens count', async (t) => {
  const body = fixtureJson('gemini/chat.json');
  const cases: Array<[string, string]> = [
    ['STOP', 'stop'],
    ['MAX_TOKENS', 'length'],
    ['SAFETY', 'content_filter'],
    ['RECITATION', 'content_filter'],
    ['PROHIBITED_CONTENT', 'content_filter'],
    ['OTHER', 'content_filter'],
    ['MALFORMED_FUNCTION_CALL', 'stop'],
    ['FINISH_REASON_UNSPECIFIED', 'stop'],
  ];
  for (const [native, openai] of cases) {
    body.candidates[0].finishReason = native;
    t.equal(provider.chatResponse(body, context()).choices[0]!.finish_reason, openai, native);
  }
  const blocked = provider.chatResponse({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 } }, context());
  t.equal(checkCompletion(blocked), null);
  t.match(blocked.choices[0], { message: { content: null }, finish_reason: 'content_filter' });
  const cached = provider.chatResponse({ ...body, usageMetadata: { promptTokenCount: 1000, cachedContentTokenCount: 800, toolUsePromptTokenCount: 20, candidatesTokenCount: 5 } }, context());
  t.same(cached.usage, { prompt_tokens: 1020, completion_tokens: 5, total_tokens: 1025, prompt_tokens_details: { cached_tokens: 800 }, completion_tokens_details: { reasoning_tokens: 0 } });
  t.match(catching(() => provider.chatResponse({ nothing: true }, context())), { reason: 'bad_response', status: 502 });
});

function catching(fn: () => unknown): unknown {
  try {
    fn();
    return undefined;
  } catch (error) {
    return error;
  }
}

const streamUsage = { prompt_tokens: 14, completion_tokens: 47, total_tokens: 61, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 40 } };
const chunk = (choices: unknown[], extra: object = {}) => ({ id: 'bH6LaZW8Fp_3nsEPqtaSwQ4', object: 'chat.completion.chunk', model: 'gemini-2.5-flash', choices, ...extra });

for (const [framing, transcript] of [
  ['CRLF, as recorded', fixture('gemini/stream.sse')],
  ['LF', toLf(fixture('gemini/stream.sse'))],
] as const) {
  t.test(`stream.sse (${framing}) becomes text, finish and usage chunks, each schema-valid`, async (t) => {
    t.equal(framing.startsWith('CRLF'), transcript.includes('\r\n'), 'the framing under test');
    for (const pieceSize of [transcript.length, 5]) {
      const translator = provider.streamTranslator(context(true));
      const { chunks, error } = replayUntilError(translator, transcript, pieceSize);
      t.equal(error, undefined);
      for (const c of chunks) t.equal(checkChunk(c), null);
      t.strictSame(withoutCreated(chunks), [
        chunk([{ index: 0, delta: { role: 'assistant', content: 'The capital of France' }, finish_reason: null }]),
        chunk([{ index: 0, delta: { content: ' is Paris.' }, finish_reason: null }]),
        chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
        chunk([], { usage: streamUsage }),
      ]);
      t.equal(translator.finished, true);
    }
  });
}

t.test('stream-function-call.sse becomes one whole tool call at index 0 and finish_reason tool_calls', async (t) => {
  const translator = provider.streamTranslator(context(true));
  const { chunks, error } = replayUntilError(translator, fixture('gemini/stream-function-call.sse'));
  t.equal(error, undefined);
  for (const c of chunks) t.equal(checkChunk(c), null);
  const call = { index: 0, id: 'call_req1_0', type: 'function', function: { name: 'weather', arguments: '{"location":"San Francisco"}' } };
  const usage = { prompt_tokens: 29, completion_tokens: 60, total_tokens: 89, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 45 } };
  t.strictSame(withoutCreated(chunks), [
    { ...chunk([{ index: 0, delta: { role: 'assistant', tool_calls: [call] }, finish_reason: null }]), id: 'b36LacjwM668nsEP2tbsgQQ' },
    { ...chunk([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]), id: 'b36LacjwM668nsEP2tbsgQQ' },
    { ...chunk([], { usage }), id: 'b36LacjwM668nsEP2tbsgQQ' },
  ]);
  t.equal(translator.finished, true);
});

t.test('an error object inside the stream throws an UpstreamError after the content before it', async (t) => {
  const first = fixture('gemini/stream.sse').split('\r\n\r\n')[0]!;
  const overloaded = `${first}\r\n\r\ndata: ${JSON.stringify(fixtureJson('gemini/error-503.json'))}\r\n\r\n`;
  const { chunks, error } = replayUntilError(provider.streamTranslator(context(true)), overloaded);
  t.equal(streamedText(chunks), 'The capital of France');
  t.ok(isUpstreamError(error));
  t.match(error, { reason: 'stream_error', upstreamStatus: 200, status: 503, retryable: true, message: 'The model is overloaded. Please try again later.' });
});

t.test('a stream that ends without a finishReason has not finished', async (t) => {
  const translator = provider.streamTranslator(context(true));
  const { chunks } = replayUntilError(translator, fixture('gemini/stream.sse').split('\r\n\r\n').slice(0, 2).join('\r\n\r\n'));
  t.equal(streamedText(chunks), 'The capital of France is Paris.');
  t.equal(translator.finished, false);
  t.notOk(chunks.some((c) => c.usage));
});

t.test('every error fixture maps through the common status policy; a bad key is 502, RetryInfo sets the wait', async (t) => {
  const cases: Array<[string, number, Record<string, string>, Record<string, unknown>]> = [
    ['error-400-invalid-api-key.json', 400, {}, { status: 502, retryable: false, code: 'provider_auth_error', message: /credentials \(HTTP 400 INVALID_ARGUMENT API_KEY_INVALID: API key not valid/ }],
    ['error-404.json', 404, {}, { status: 404, retryable: false, code: 'NOT_FOUND', message: /^models\/gemini-does-not-exist is not found/ }],
    ['error-429.json', 429, {}, { status: 429, retryable: true, retryAfterMs: 34400, code: 'RESOURCE_EXHAUSTED', type: 'rate_limit_error' }],
    ['error-429.json', 429, { 'retry-after': '5' }, { status: 429, retryable: true, retryAfterMs: 5000 }],
    ['error-500.json', 500, {}, { status: 503, retryable: true, code: 'INTERNAL' }],
    ['error-503.json', 503, {}, { status: 503, retryable: true, message: 'The model is overloaded. Please try again later.' }],
  ];
  for (const [file, status, headers, expected] of cases) {
    const error = provider.error(status, headers, fixture(`gemini/${file}`));
    t.ok(isUpstreamError(error), file);
    t.match(error, { provider: 'google', reason: 'http_status', upstreamStatus: status, ...expected }, `${file} ${JSON.stringify(headers)}`);
  }
  const precondition = { error: { code: 400, message: 'User location is not supported for the API use.', status: 'FAILED_PRECONDITION' } };
  t.match(provider.error(400, {}, JSON.stringify(precondition)), { status: 502, retryable: false, code: 'provider_account_error' });
  t.match(provider.error(403, {}, '{"error":{"code":403,"message":"denied","status":"PERMISSION_DENIED"}}'), { status: 502, retryable: false });
  t.match(provider.error(400, {}, '{"error":{"code":400,"message":"Invalid JSON payload","status":"INVALID_ARGUMENT"}}'), { status: 400, retryable: false, message: 'Invalid JSON payload' });
});
