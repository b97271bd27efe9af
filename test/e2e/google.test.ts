// End to end: the real gateway, the real OpenAI SDK as client, a fake Gemini upstream speaking
// generateContent / streamGenerateContent (CRLF-framed SSE) and replaying the golden fixtures.
import t from 'tap';
import { APIError, type OpenAI } from 'openai';
import { startGateway, GATEWAY_KEY, type TestGateway, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { startFakeGemini, PROVIDER_KEYS } from '../helpers/fakes.js';
import { fixture, fixtureJson, gatedSse, json, readUntilFailure, type FakeProvider } from '../helpers/fake-provider.js';
import { checkChunk, checkCompletion } from '../helpers/schema.js';

let upstream: FakeProvider;
let gateway: TestGateway;

t.before(async () => {
  upstream = await startFakeGemini();
  gateway = await startGateway({ ...PROTOCOL_ONLY, GOOGLE_API_KEY: PROVIDER_KEYS.google, GOOGLE_PROJECT_ID: 'modelgate-test', GOOGLE_BASE_URL: upstream.url });
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
  function: { name: 'weather', description: 'Get current weather for a location', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } },
};

t.test('a non-stream answer comes back schema-valid with thinking counted as reasoning tokens', async (t) => {
  const { data, response } = await gateway.client().chat.completions.create({ model: 'gemini-2.5-flash', messages: question }).withResponse();
  t.equal(checkCompletion(data), null);
  t.equal(data.choices[0]!.message.content, 'The capital of France is Paris.');
  t.same(data.usage, { prompt_tokens: 14, completion_tokens: 47, total_tokens: 61, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 40 } });
  t.equal(response.headers.get('x-modelgate-provider'), 'google');
  t.equal(response.headers.get('x-modelgate-model'), 'gemini-2.5-flash');
  t.ok(Number(response.headers.get('x-modelgate-cost')) > 0, 'billed');
});

t.test('the upstream gets the generateContent path, x-goog-api-key and project, the translated body, never the uc_ key', async (t) => {
  await gateway.client().chat.completions.create({ model: 'google/gemini-2.5-flash', messages: question, temperature: 0.2, max_tokens: 64 });
  const seen = upstream.last!;
  t.equal(seen.method, 'POST');
  t.equal(seen.url, '/v1beta/models/gemini-2.5-flash:generateContent');
  t.equal(seen.headers['x-goog-api-key'], PROVIDER_KEYS.google);
  t.equal(seen.headers['x-goog-user-project'], 'modelgate-test');
  t.equal(seen.headers.authorization, undefined, 'the client Authorization header is not forwarded');
  t.notOk(JSON.stringify(seen.headers).includes(GATEWAY_KEY));
  t.notOk(seen.body.includes(GATEWAY_KEY));
  t.strictSame(seen.json, {
    systemInstruction: { parts: [{ text: 'You are a concise assistant.' }] },
    contents: [{ role: 'user', parts: [{ text: 'What is the capital of France?' }] }],
    generationConfig: { temperature: 0.2, maxOutputTokens: 64 },
  });
});

t.test('a CRLF-framed stream arrives chunk by chunk, schema-valid, with the usage chunk when asked', async (t) => {
  const stream = await gateway.client().chat.completions.create({ model: 'gemini-2.5-flash', messages: question, stream: true, stream_options: { include_usage: true } });
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  for (const chunk of chunks) t.equal(checkChunk(chunk), null);
  t.equal(upstream.last!.url, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
  t.equal(chunks[0]!.choices[0]!.delta.role, 'assistant');
  t.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'The capital of France is Paris.');
  t.equal(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0]!.finish_reason, 'stop');
  t.same(chunks.at(-1)!.choices, []);
  t.equal(chunks.at(-1)!.usage?.total_tokens, 61);
});

t.test('a tool call round trips: the SDK gets a call with a gateway-made id, its result reaches Gemini as a functionResponse', async (t) => {
  const client = gateway.client();
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: "What's the weather in San Francisco?" }];
  const stream = await client.chat.completions.create({ model: 'gemini-2.5-flash', messages, tools: [weatherTool], tool_choice: 'auto', stream: true });
  let call: { id: string; name: string; arguments: string } | undefined;
  let finish: string | null = null;
  for await (const chunk of stream) {
    t.equal(checkChunk(chunk), null);
    const delta = chunk.choices[0]?.delta.tool_calls?.[0];
    if (delta) call = { id: delta.id!, name: delta.function!.name!, arguments: delta.function!.arguments! };
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  t.equal(finish, 'tool_calls');
  t.match(call, { id: /^call_[A-Za-z0-9]+_0$/, name: 'weather', arguments: '{"location":"San Francisco"}' });

  messages.push(
    { role: 'assistant', content: null, tool_calls: [{ id: call!.id, type: 'function', function: { name: call!.name, arguments: call!.arguments } }] },
    { role: 'tool', tool_call_id: call!.id, content: '{"temperature_c":18,"condition":"foggy"}' },
  );
  const second = await client.chat.completions.create({ model: 'gemini-2.5-flash', messages, tools: [weatherTool], tool_choice: 'auto' });
  t.equal(checkCompletion(second), null);
  t.equal(second.choices[0]!.message.content, 'The capital of France is Paris.', 'the fake answers text once the function response is in');
  t.strictSame(upstream.last!.json, fixtureJson('gemini/request-tools.json'), 'exactly the golden tool request');
});

t.test('a non-stream tool call has the same shape, and each request gets its own ids', async (t) => {
  const ask = () => gateway.client().chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Weather?' }], tools: [weatherTool] });
  const [a, b] = [await ask(), await ask()];
  t.equal(checkCompletion(a), null);
  t.equal(a.choices[0]!.finish_reason, 'tool_calls');
  t.equal(a.choices[0]!.message.content, null);
  t.not(a.choices[0]!.message.tool_calls![0]!.id, b.choices[0]!.message.tool_calls![0]!.id);
});

t.test('an error object after the first content reaches the SDK as an APIError', async (t) => {
  const first = fixture('gemini/stream.sse').split('\r\n\r\n')[0]!;
  const gate = gatedSse(`${first}\r\n\r\n`, `data: ${JSON.stringify(fixtureJson('gemini/error-503.json'))}\r\n\r\n`);
  upstream.next(gate.responder);
  const stream = await gateway.client().chat.completions.create({ model: 'gemini-2.5-flash', messages: question, stream: true });
  const { text, failure } = await readUntilFailure(stream, gate);
  t.ok(failure instanceof APIError, 'an APIError');
  t.match(failure, { message: /overloaded/ });
  t.equal(text, 'The capital of France');
});

t.test('provider errors before any content become HTTP errors: bad key → 502, quota → 429, 503 stays 503', async (t) => {
  const client = gateway.client();
  upstream.next(json(400, fixtureJson('gemini/error-400-invalid-api-key.json')));
  await t.rejects(client.chat.completions.create({ model: 'gemini-2.5-flash', messages: question }), { status: 502, message: /credentials/ });
  upstream.next(json(503, fixtureJson('gemini/error-503.json')));
  await t.rejects(client.chat.completions.create({ model: 'gemini-2.5-flash', messages: question }), { status: 503, message: 'Provider unavailable' });
  // Last: RetryInfo's 34.4 s keeps Gemini out of this gateway's routing that long.
  upstream.next(json(429, fixtureJson('gemini/error-429.json')));
  const limited = await client.chat.completions.create({ model: 'gemini-2.5-flash', messages: question, stream: true }).catch((error: { status: number; message: string; headers: Headers }) => error);
  t.match(limited, { status: 429, message: /Rate limit exceeded/ });
  t.equal((limited as { headers: Headers }).headers.get('retry-after'), '35', 'the provider\'s RetryInfo reaches the client');
});

t.test('a gateway holding a wrong provider key gets the provider\'s auth error, and its client a 502', async (t) => {
  const misconfigured = await startGateway({ ...PROTOCOL_ONLY, GOOGLE_API_KEY: 'AIza-wrong', GOOGLE_BASE_URL: upstream.url });
  try {
    await t.rejects(misconfigured.client().chat.completions.create({ model: 'gemini-2.5-flash', messages: question }), { status: 502, message: /rejected the gateway's credentials/ });
  } finally {
    await misconfigured.close();
  }
});

// Listening servers keep the event loop alive: end the root test explicitly so t.after runs.
t.end();
