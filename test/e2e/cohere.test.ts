// End to end through the real gateway with the real OpenAI SDK as client, in front of a fake Cohere
// that speaks v2 chat (Bearer auth, /v2/chat, named SSE events) and replays the golden fixtures.
import t from 'tap';
import { APIError, type OpenAI } from 'openai';
import { startGateway, call, GATEWAY_KEY, type TestGateway, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { startFakeCohere, PROVIDER_KEYS } from '../helpers/fakes.js';
import { fixture, fixtureJson, gatedSse, json, readUntilFailure, type FakeProvider } from '../helpers/fake-provider.js';
import { checkChunk, checkCompletion, checkError } from '../helpers/schema.js';
import { formatCost } from '../../core/respond.js';

let upstream: FakeProvider;
let gateway: TestGateway;

t.before(async () => {
  upstream = await startFakeCohere();
  // One attempt per request: the error tests see each upstream answer as the client's.
  gateway = await startGateway({ COHERE_API_KEY: PROVIDER_KEYS.cohere, COHERE_BASE_URL: upstream.url, ...PROTOCOL_ONLY });
});
t.after(async () => {
  await gateway.close();
  await upstream.close();
});
t.beforeEach(() => upstream.reset());

const question: Omit<OpenAI.ChatCompletionCreateParamsNonStreaming, 'stream'> = {
  model: 'cohere/command-a-03-2025',
  messages: [
    { role: 'system', content: 'You are a concise assistant.' },
    { role: 'user', content: 'What is the capital of France?' },
  ],
  temperature: 0.2,
  max_tokens: 64,
  stop: '\n\n\n',
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

t.test('a non-stream answer is schema-valid and costs billed units × catalog price', async (t) => {
  const { data, response } = await gateway.client().chat.completions.create({ ...question, stream: false }).withResponse();
  t.equal(checkCompletion(data), null);
  t.equal(data.choices[0]!.message.content, 'The capital of France is Paris.');
  t.strictSame(data.usage, { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 });
  t.equal(response.headers.get('x-modelgate-provider'), 'cohere');
  t.equal(response.headers.get('x-modelgate-model'), 'command-a-03-2025');
  // Cohere billed 12 input and 7 output units; command-a costs $2.50/M in and $10/M out.
  t.equal(response.headers.get('x-modelgate-cost'), formatCost(12 * 2.5e-6 + 7 * 1e-5));
});

t.test('the upstream gets /v2/chat, the Cohere key and the translated body, never the uc_ key', async (t) => {
  await gateway.client().chat.completions.create({ ...question, stream: false });
  const seen = upstream.last!;
  t.equal(seen.method, 'POST');
  t.equal(seen.url, '/v2/chat');
  t.equal(seen.headers.authorization, `Bearer ${PROVIDER_KEYS.cohere}`);
  t.notOk(JSON.stringify(seen.headers).includes(GATEWAY_KEY));
  t.notOk(seen.body.includes(GATEWAY_KEY));
  t.strictSame(seen.json, fixtureJson('cohere/request.json'));
});

t.test('a stream arrives as schema-valid chunks, with the usage chunk only when asked', async (t) => {
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of await gateway.client().chat.completions.create({ ...question, stream: true })) chunks.push(chunk);
  for (const chunk of chunks) t.equal(checkChunk(chunk), null);
  t.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'The capital of France is Paris.');
  t.equal(chunks.at(-1)!.choices[0]!.finish_reason, 'stop');
  t.notOk(chunks.some((c) => c.usage), 'no usage when the client did not ask');
  t.equal(upstream.last!.json.stream, true);

  const withUsage: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of await gateway.client().chat.completions.create({ ...question, stream: true, stream_options: { include_usage: true } })) withUsage.push(chunk);
  t.strictSame(withUsage.at(-1)!.choices, []);
  t.strictSame(withUsage.at(-1)!.usage, { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 });
  t.notOk('stream_options' in upstream.last!.json, 'Cohere always reports usage; the field is not sent');
});

t.test('a tool call round trip: the SDK gets the call, sends the result, Cohere receives it as a tool document', async (t) => {
  const client = gateway.client();
  const first = await client.chat.completions.create({ model: 'command-a-03-2025', messages: [weatherQuestion], tools: [weatherTool] });
  t.equal(checkCompletion(first), null);
  const message = first.choices[0]!.message;
  t.equal(first.choices[0]!.finish_reason, 'tool_calls');
  const call = message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
  t.strictSame([call.id, call.function.name, JSON.parse(call.function.arguments)], ['weather_dqgshstja6p9', 'weather', { location: 'San Francisco' }]);

  const second = await client.chat.completions.create({
    model: 'command-a-03-2025',
    messages: [weatherQuestion, message, { role: 'tool', tool_call_id: call.id, content: '{"temperature_c":18,"condition":"foggy"}' }],
    tools: [weatherTool],
  });
  t.equal(second.choices[0]!.message.content, 'The capital of France is Paris.', "the fake's text answer once a result came back");
  const sent = upstream.last!.json.messages;
  t.strictSame(sent[1], { role: 'assistant', tool_calls: [{ id: call.id, type: 'function', function: { name: 'weather', arguments: call.function.arguments } }] });
  t.strictSame(sent[2], { role: 'tool', tool_call_id: call.id, content: [{ type: 'document', document: { data: '{"temperature_c":18,"condition":"foggy"}' } }] });
});

t.test('a streamed tool call assembles into one call the SDK can answer', async (t) => {
  const stream = await gateway.client().chat.completions.create({ model: 'command-a-03-2025', messages: [weatherQuestion], tools: [weatherTool], stream: true });
  const calls = new Map<number, { id?: string; name?: string; args: string }>();
  let finish: string | null = null;
  for await (const chunk of stream) {
    t.equal(checkChunk(chunk), null);
    for (const fragment of chunk.choices[0]?.delta.tool_calls ?? []) {
      const call = calls.get(fragment.index) ?? { args: '' };
      call.id ??= fragment.id;
      call.name ??= fragment.function?.name;
      call.args += fragment.function?.arguments ?? '';
      calls.set(fragment.index, call);
    }
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  t.strictSame([...calls.values()], [{ id: 'weather_e8p4pn45zt0t', name: 'weather', args: '{"location": "San Francisco"}' }]);
  t.equal(finish, 'tool_calls');
});

t.test("Cohere's errors reach the SDK with the documented status", async (t) => {
  upstream.next(json(498, { message: 'invalid api token' }));
  const auth = await call(gateway.url, '/chat/completions', { body: JSON.stringify(question) });
  t.equal(auth.status, 502, "a bad Cohere token is the gateway's fault, not the client's");
  t.equal(checkError(auth.json), null);
  t.match(auth.json.error.message, /check COHERE_API_KEY/);
  upstream.next(json(400, fixtureJson('cohere/error-400.json')));
  await t.rejects(gateway.client().chat.completions.create(question), { status: 400, message: /at least 1 token/ });
  // A provider's Retry-After reaches the client (and keeps Cohere out that long: 20 ms here).
  upstream.next(json(429, fixtureJson('cohere/error-429.json'), { 'retry-after-ms': '20' }));
  const limited = await gateway.client().chat.completions.create(question).catch((error: { status: number; message: string; headers: Headers }) => error);
  t.match(limited, { status: 429, message: /Rate limit exceeded/ });
  t.equal((limited as { headers: Headers }).headers.get('retry-after'), '1');
  await new Promise((resolve) => setTimeout(resolve, 30));
});

t.test('an error after the first content ends the stream with an error event the SDK throws', async (t) => {
  const start = fixture('cohere/stream.sse').split('\n\n').slice(0, 3).join('\n\n');
  const gate = gatedSse(`${start}\n\n`, 'event: message-end\ndata: {"type":"message-end","delta":{"finish_reason":"ERROR","error":"generation failed"}}\n\n');
  upstream.next(gate.responder);
  const stream = await gateway.client().chat.completions.create({ ...question, stream: true });
  const { text, failure } = await readUntilFailure(stream, gate);
  t.ok(failure instanceof APIError, 'an APIError');
  t.match(failure, { message: /generation failed/ });
  t.equal(text, 'The', 'the content before the error was delivered');
});

t.test('a parameter Cohere cannot honour is refused before any upstream call', async (t) => {
  await t.rejects(gateway.client().chat.completions.create({ ...question, logprobs: true }), { status: 400, param: 'logprobs', message: /log probabilities/ });
  t.equal(upstream.requests.length, 0);
});

// Listening servers keep the event loop alive: end the root test explicitly so t.after runs.
t.end();
