// End to end: the real gateway, the real OpenAI SDK as client, a fake Anthropic upstream speaking
// the Messages API and replaying the golden fixtures.
import t from 'tap';
import { APIError, type OpenAI } from 'openai';
import { startGateway, GATEWAY_KEY, type TestGateway, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { startFakeAnthropic, PROVIDER_KEYS } from '../helpers/fakes.js';
import { fixture, fixtureJson, gatedSse, json, readUntilFailure, type FakeProvider } from '../helpers/fake-provider.js';
import { checkChunk, checkCompletion } from '../helpers/schema.js';

let upstream: FakeProvider;
let gateway: TestGateway;

t.before(async () => {
  upstream = await startFakeAnthropic();
  gateway = await startGateway({ ...PROTOCOL_ONLY, ANTHROPIC_API_KEY: PROVIDER_KEYS.anthropic, ANTHROPIC_BASE_URL: upstream.url });
});
t.after(async () => {
  await gateway.close();
  await upstream.close();
});
t.beforeEach(() => upstream.reset());

const question: OpenAI.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'You are a concise assistant.' },
  { role: 'user', content: 'What is the capital of France?' },
];
const weatherTool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Get current weather for a city', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } },
};
// USD per token of claude-sonnet-4-5 in config/models.json
const PRICE = { input: 3e-6, cached: 3e-7, write: 3.75e-6, output: 1.5e-5 };

t.test('a non-stream answer comes back schema-valid, with cache reads billed at the cached price', async (t) => {
  const { data, response } = await gateway.client().chat.completions.create({ model: 'claude-sonnet-4-5', messages: question }).withResponse();
  t.equal(checkCompletion(data), null);
  t.equal(data.choices[0]!.message.content, 'The capital of France is Paris.');
  t.equal(data.choices[0]!.finish_reason, 'stop');
  t.same(data.usage, { prompt_tokens: 2067, completion_tokens: 10, total_tokens: 2077, prompt_tokens_details: { cached_tokens: 2048, cache_write_tokens: 0 } });
  t.equal(response.headers.get('x-modelgate-provider'), 'anthropic');
  t.equal(response.headers.get('x-modelgate-model'), 'claude-sonnet-4-5');
  t.ok(Math.abs(Number(response.headers.get('x-modelgate-cost')) - (19 * PRICE.input + 2048 * PRICE.cached + 10 * PRICE.output)) < 1e-9);
});

t.test('the upstream gets /v1/messages, the provider key and version, the translated body, never the uc_ key', async (t) => {
  await gateway.client().chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: question, temperature: 0.2, user: 'user-123' });
  const seen = upstream.last!;
  t.equal(seen.method, 'POST');
  t.equal(seen.url, '/v1/messages');
  t.equal(seen.headers['x-api-key'], PROVIDER_KEYS.anthropic);
  t.equal(seen.headers['anthropic-version'], '2023-06-01');
  t.equal(seen.headers.authorization, undefined, 'the client Authorization header is not forwarded');
  t.notOk(JSON.stringify(seen.headers).includes(GATEWAY_KEY));
  t.notOk(seen.body.includes(GATEWAY_KEY));
  t.strictSame(seen.json, {
    model: 'claude-sonnet-4-5',
    max_tokens: 64000,
    system: 'You are a concise assistant.',
    messages: [{ role: 'user', content: 'What is the capital of France?' }],
    temperature: 0.2,
    metadata: { user_id: 'user-123' },
  });
});

t.test('a stream arrives chunk by chunk, schema-valid, with the usage chunk when asked', async (t) => {
  const stream = await gateway.client().chat.completions.create({ model: 'claude-sonnet-4-5', messages: question, stream: true, stream_options: { include_usage: true } });
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  for (const chunk of chunks) t.equal(checkChunk(chunk), null);
  t.equal(chunks[0]!.choices[0]!.delta.role, 'assistant');
  t.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'The capital of France is Paris.');
  t.equal(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0]!.finish_reason, 'stop');
  t.same(chunks.at(-1)!.choices, []);
  t.same(chunks.at(-1)!.usage, { prompt_tokens: 2067, completion_tokens: 10, total_tokens: 2077, prompt_tokens_details: { cached_tokens: 2048, cache_write_tokens: 0 } });
  t.equal(upstream.last!.json.stream, true);
  t.equal(upstream.last!.headers.accept, 'text/event-stream');
});

t.test('a tool call round trips: the SDK gets the call, and its result reaches Anthropic as a tool_result', async (t) => {
  const client = gateway.client();
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: "What's the weather in Paris?" }];
  const first = await client.chat.completions.create({ model: 'claude-sonnet-4-5', messages, tools: [weatherTool] });
  t.equal(checkCompletion(first), null);
  const call = first.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
  t.equal(first.choices[0]!.finish_reason, 'tool_calls');
  t.same(call, { id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } });

  messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '18C, cloudy' });
  const second = await client.chat.completions.create({ model: 'claude-sonnet-4-5', messages, tools: [weatherTool] });
  t.equal(second.choices[0]!.message.content, 'The capital of France is Paris.', 'the fake answers text once the tool result is in');
  t.strictSame(upstream.last!.json.messages.slice(1), [
    {
      role: 'assistant',
      content: [
        { type: 'text', text: "I'll check the current weather in Paris for you." },
        { type: 'tool_use', id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', name: 'get_weather', input: { location: 'Paris' } },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', content: '18C, cloudy' }] },
  ]);
});

t.test('a streamed tool call assembles in the SDK to the id, name and arguments of the fixture', async (t) => {
  const stream = await gateway.client().chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: "What's the weather in Paris?" }], tools: [weatherTool], stream: true });
  const calls = new Map<number, { id?: string; name?: string; arguments: string }>();
  let finish: string | null = null;
  for await (const chunk of stream) {
    t.equal(checkChunk(chunk), null);
    for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
      const call = calls.get(delta.index) ?? { arguments: '' };
      call.id ??= delta.id;
      call.name ??= delta.function?.name;
      call.arguments += delta.function?.arguments ?? '';
      calls.set(delta.index, call);
    }
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  t.same([...calls.entries()], [[0, { id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', name: 'get_weather', arguments: '{"location": "Paris"}' }]]);
  t.equal(finish, 'tool_calls');
});

t.test('an overloaded error event after the first content reaches the SDK as an APIError', async (t) => {
  const transcript = fixture('anthropic/stream-error-overloaded.sse');
  const cut = transcript.indexOf('event: error');
  const gate = gatedSse(transcript.slice(0, cut), transcript.slice(cut));
  upstream.next(gate.responder);
  const stream = await gateway.client().chat.completions.create({ model: 'claude-sonnet-4-5', messages: question, stream: true });
  const { text, failure } = await readUntilFailure(stream, gate);
  t.ok(failure instanceof APIError, 'an APIError');
  t.match(failure, { message: /Overloaded/ });
  t.equal(text, 'The capital');
});

t.test('provider errors before any content become HTTP errors: 529 → 503, a bad provider key → 502, a 400 passed back', async (t) => {
  const client = gateway.client();
  upstream.next(json(529, fixtureJson('anthropic/error-529.json')));
  // With no other candidate, an overload is the gateway's 503 (the provider's text goes to the log).
  await t.rejects(client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: question }), { status: 503, message: 'Provider unavailable' });
  upstream.next(json(401, fixtureJson('anthropic/error-401.json')));
  await t.rejects(client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: question, stream: true }), { status: 502, message: /credentials/ });
  upstream.next(json(400, fixtureJson('anthropic/error-400.json')));
  await t.rejects(client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: question }), { status: 400, message: /prompt is too long/ });
});

t.test('a parameter Anthropic cannot honour is refused with 400 before anything is sent', async (t) => {
  await t.rejects(
    gateway.client().chat.completions.create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/bmp;base64,Qk0=' } }] }] }),
    { status: 400, message: /messages\[0\]\.content\[0\]\.image_url/ },
  );
  t.equal(upstream.requests.length, 0);
});

t.test('cache writes are billed at the cache-write price', async (t) => {
  const body = fixtureJson('anthropic/chat.json');
  body.usage = { input_tokens: 5, cache_creation_input_tokens: 1000, cache_read_input_tokens: 0, output_tokens: 300 };
  upstream.next(json(200, body));
  const { data, response } = await gateway.client().chat.completions.create({ model: 'claude-sonnet-4-5', messages: question }).withResponse();
  t.same(data.usage?.prompt_tokens_details, { cached_tokens: 0, cache_write_tokens: 1000 });
  t.ok(Math.abs(Number(response.headers.get('x-modelgate-cost')) - (5 * PRICE.input + 1000 * PRICE.write + 300 * PRICE.output)) < 1e-9);
});

t.test('a gateway holding a wrong provider key gets the provider\'s auth error, and its client a 502', async (t) => {
  const misconfigured = await startGateway({ ...PROTOCOL_ONLY, ANTHROPIC_API_KEY: 'sk-ant-wrong', ANTHROPIC_BASE_URL: upstream.url });
  try {
    await t.rejects(misconfigured.client().chat.completions.create({ model: 'claude-sonnet-4-5', messages: question }), { status: 502, message: /rejected the gateway's credentials/ });
  } finally {
    await misconfigured.close();
  }
});

// Listening servers keep the event loop alive: end the root test explicitly so t.after runs.
t.end();
