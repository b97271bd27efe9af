// End to end through the real gateway with the real OpenAI SDK as client, in front of a fake Mistral
// that speaks its chat-completions API (Bearer auth, data-only SSE ending in [DONE], 422 for fields
// it does not know) and replays the golden fixtures.
import t from 'tap';
import { APIError, type OpenAI } from 'openai';
import { startGateway, call, GATEWAY_KEY, type TestGateway, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { startFakeMistral, PROVIDER_KEYS } from '../helpers/fakes.js';
import { fixture, fixtureJson, gatedSse, json, readUntilFailure, type FakeProvider } from '../helpers/fake-provider.js';
import { checkChunk, checkCompletion, checkError } from '../helpers/schema.js';
import { formatCost } from '../../core/respond.js';

let upstream: FakeProvider;
let gateway: TestGateway;

t.before(async () => {
  upstream = await startFakeMistral();
  // One attempt per request: the error tests see each upstream answer as the client's.
  gateway = await startGateway({ MISTRAL_API_KEY: PROVIDER_KEYS.mistral, MISTRAL_BASE_URL: upstream.url, ...PROTOCOL_ONLY });
});
t.after(async () => {
  await gateway.close();
  await upstream.close();
});
t.beforeEach(() => upstream.reset());

const question: Omit<OpenAI.ChatCompletionCreateParamsNonStreaming, 'stream'> = {
  model: 'mistral/mistral-small-latest',
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
};

const weatherTool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'weather',
    description: 'Get current weather for a location',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};
const weatherQuestion: OpenAI.ChatCompletionMessageParam = { role: 'user', content: "What's the weather in San Francisco?" };

t.test('a non-stream answer is schema-valid and priced from the catalog', async (t) => {
  const { data, response } = await gateway.client().chat.completions.create({ ...question, stream: false }).withResponse();
  t.equal(checkCompletion(data), null);
  t.equal(data.choices[0]!.message.content, 'The capital of France is Paris.');
  t.strictSame(data.usage, { prompt_tokens: 13, completion_tokens: 8, total_tokens: 21 });
  t.equal(response.headers.get('x-modelgate-provider'), 'mistral');
  t.equal(response.headers.get('x-modelgate-model'), 'mistral-small-latest');
  t.equal(response.headers.get('x-modelgate-cost'), formatCost(13 * 6e-8 + 8 * 1.8e-7));
});

t.test('the upstream gets /v1/chat/completions, the Mistral key and the translated body, never the uc_ key', async (t) => {
  await gateway.client().chat.completions.create({ ...question, stream: false });
  const seen = upstream.last!;
  t.equal(seen.method, 'POST');
  t.equal(seen.url, '/v1/chat/completions');
  t.equal(seen.headers.authorization, `Bearer ${PROVIDER_KEYS.mistral}`);
  t.notOk(JSON.stringify(seen.headers).includes(GATEWAY_KEY));
  t.notOk(seen.body.includes(GATEWAY_KEY));
  t.strictSame(seen.json, fixtureJson('mistral/request.json'));
});

t.test('a stream asked for usage gets it from the finish chunk, and Mistral never sees stream_options', async (t) => {
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  const stream = await gateway.client().chat.completions.create({ ...question, stream: true, stream_options: { include_usage: true } });
  for await (const chunk of stream) chunks.push(chunk);
  for (const chunk of chunks) t.equal(checkChunk(chunk), null);
  t.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'The capital of France is Paris.');
  t.strictSame(chunks.at(-1)!.choices, []);
  t.strictSame(chunks.at(-1)!.usage, { prompt_tokens: 13, completion_tokens: 8, total_tokens: 21 });
  t.equal(upstream.last!.json.stream, true);
  t.notOk('stream_options' in upstream.last!.json);

  const plain: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of await gateway.client().chat.completions.create({ ...question, stream: true })) plain.push(chunk);
  t.notOk(plain.some((c) => c.usage), 'no usage when the client did not ask');
  t.equal(plain.at(-1)!.choices[0]!.finish_reason, 'stop');
});

t.test('a tool call round trip: the SDK gets the call, sends the result, Mistral receives it with the function name', async (t) => {
  const client = gateway.client();
  const first = await client.chat.completions.create({ model: 'mistral-small-latest', messages: [weatherQuestion], tools: [weatherTool], tool_choice: 'required' });
  t.equal(checkCompletion(first), null);
  t.equal(upstream.last!.json.tool_choice, 'any');
  const message = first.choices[0]!.message;
  const call = message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
  t.strictSame([call.id, call.type, call.function.name], ['gSIMJiOkT', 'function', 'weather']);

  const second = await client.chat.completions.create({
    model: 'mistral-small-latest',
    messages: [weatherQuestion, message, { role: 'tool', tool_call_id: call.id, content: '{"temperature_c":18,"condition":"foggy"}' }],
    tools: [weatherTool],
  });
  t.equal(second.choices[0]!.message.content, 'The capital of France is Paris.', "the fake's text answer once a result came back");
  const sent = upstream.last!.json.messages;
  t.strictSame(sent[1], { role: 'assistant', content: '', tool_calls: [{ id: 'gSIMJiOkT', type: 'function', function: { name: 'weather', arguments: call.function.arguments } }] });
  t.strictSame(sent[2], { role: 'tool', tool_call_id: 'gSIMJiOkT', name: 'weather', content: '{"temperature_c":18,"condition":"foggy"}' });
});

t.test('a streamed tool call reaches the SDK with an index and a type it can assemble', async (t) => {
  const stream = await gateway.client().chat.completions.create({ model: 'mistral-small-latest', messages: [weatherQuestion], tools: [weatherTool], stream: true });
  const fragments: OpenAI.ChatCompletionChunk.Choice.Delta.ToolCall[] = [];
  let finish: string | null = null;
  for await (const chunk of stream) {
    t.equal(checkChunk(chunk), null);
    fragments.push(...(chunk.choices[0]?.delta.tool_calls ?? []));
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  t.strictSame(fragments, [{ index: 0, id: 'gSIMJiOkT', type: 'function', function: { name: 'weather', arguments: '{"location": "San Francisco"}' } }]);
  t.equal(finish, 'tool_calls');
});

t.test('an error object after the first content ends the stream with an error event the SDK throws', async (t) => {
  const start = fixture('mistral/stream.sse').split('\n\n').slice(0, 2).join('\n\n');
  const gate = gatedSse(`${start}\n\n`, `data: ${JSON.stringify(fixtureJson('mistral/error-400.json'))}\n\n`);
  upstream.next(gate.responder);
  const stream = await gateway.client().chat.completions.create({ ...question, stream: true });
  const { text, failure } = await readUntilFailure(stream, gate);
  t.ok(failure instanceof APIError, 'an APIError');
  t.match(failure, { message: /capacity exceeded/ });
  t.equal(text, 'The capital', 'the content before the error was delivered');
});

t.test("Mistral's error bodies reach the SDK with the documented status", async (t) => {
  upstream.next(json(422, fixtureJson('mistral/error-422.json')));
  await t.rejects(gateway.client().chat.completions.create(question), { status: 422, message: /messages: Field required/ });
  // Capacity exceeded is an overload: retryable, and with no other candidate the gateway's 503.
  upstream.next(json(503, fixtureJson('mistral/error-400.json')));
  await t.rejects(gateway.client().chat.completions.create(question), { status: 503, message: 'Provider unavailable' });
  // A provider's Retry-After reaches the client (and keeps Mistral out that long: 20 ms here).
  upstream.next(json(429, fixtureJson('mistral/error-429.json'), { 'retry-after-ms': '20' }));
  const limited = await gateway.client().chat.completions.create(question).catch((error: { status: number; message: string; headers: Headers }) => error);
  t.match(limited, { status: 429, message: /Rate limit exceeded/ });
  t.equal((limited as { headers: Headers }).headers.get('retry-after'), '1');
  await new Promise((resolve) => setTimeout(resolve, 30));
});

t.test('a wrong Mistral key is a 502, not the client 401', async (t) => {
  const misconfigured = await startGateway({ ...PROTOCOL_ONLY, MISTRAL_API_KEY: 'wrong-key', MISTRAL_BASE_URL: upstream.url });
  try {
    const response = await call(misconfigured.url, '/chat/completions', { body: JSON.stringify(question) });
    t.equal(response.status, 502);
    t.equal(checkError(response.json), null);
    t.match(response.json.error.message, /rejected the gateway's credentials \(HTTP 401\)/);
  } finally {
    await misconfigured.close();
  }
});

// Listening servers keep the event loop alive: end the root test explicitly so t.after runs.
t.end();
