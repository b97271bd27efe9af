// The Vercel AI SDK 5 against the gateway, as its users write it: createOpenAI with the gateway's
// base URL and a uc_ key, and the provider's default model call `openai(id)`, which speaks the
// Responses API. A gpt model goes on to OpenAI's /v1/responses (a fake replaying recorded answers),
// a claude model is translated to Anthropic's Messages API; embeddings go to OpenAI's /v1/embeddings.
import t from 'tap';
import { createOpenAI } from '@ai-sdk/openai';
import { embed, embedMany, generateObject, generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { startGateway, GATEWAY_KEY, PROTOCOL_ONLY, type TestGateway } from '../helpers/gateway.js';
import { FAKE_DIMENSIONS, fakeVector, startFakeAnthropic, startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { fixtureJson, type FakeProvider } from '../helpers/fake-provider.js';

let openaiUpstream: FakeProvider;
let anthropicUpstream: FakeProvider;
let gateway: TestGateway;
let openai: ReturnType<typeof createOpenAI>;

t.before(async () => {
  openaiUpstream = await startFakeOpenAI();
  anthropicUpstream = await startFakeAnthropic();
  gateway = await startGateway({
    ...PROTOCOL_ONLY,
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${openaiUpstream.url}/v1`,
    ANTHROPIC_API_KEY: PROVIDER_KEYS.anthropic,
    ANTHROPIC_BASE_URL: anthropicUpstream.url,
  });
  openai = createOpenAI({ baseURL: gateway.url, apiKey: GATEWAY_KEY });
});
t.teardown(async () => {
  await gateway?.close();
  await openaiUpstream?.close();
  await anthropicUpstream?.close();
});
t.beforeEach(() => {
  openaiUpstream.reset();
  anthropicUpstream.reset();
});

const PROMPT = 'What is the capital of France?';
const weatherInput = z.object({ location: z.string(), unit: z.enum(['celsius', 'fahrenheit']) });
const recordedText: string = fixtureJson('openai-responses/response.json').output[0].content[0].text;

t.test('generateText with openai(id) goes through /v1/responses and returns the text and usage', async (t) => {
  const result = await generateText({ model: openai('gpt-4o-mini'), system: 'Be concise.', prompt: PROMPT, maxRetries: 0 });
  t.equal(result.text, recordedText);
  t.equal(result.finishReason, 'stop');
  t.match(result.usage, { inputTokens: 14, outputTokens: 50, totalTokens: 64 });
  const seen = openaiUpstream.last!;
  t.equal(seen.url, '/v1/responses', 'the default provider call is the Responses API');
  t.equal(seen.json.model, 'gpt-4o-mini');
  t.match(JSON.stringify(seen.json.input), /Be concise\./, 'the system prompt travels');
  t.match(JSON.stringify(seen.json.input), /capital of France/);
});

t.test('streamText streams the text and reports usage', async (t) => {
  const result = streamText({ model: openai('gpt-4o-mini'), prompt: PROMPT, maxRetries: 0, onError: () => {} });
  let text = '';
  for await (const delta of result.textStream) text += delta;
  t.equal(text, 'Dummy PDF file');
  t.match(await result.usage, { inputTokens: 44, outputTokens: 4, totalTokens: 48 });
  t.equal(await result.finishReason, 'stop');
  t.equal(openaiUpstream.last!.json.stream, true);
});

t.test('a tool with a zod schema comes back as a tool call', async (t) => {
  const result = await generateText({
    model: openai('gpt-4o-mini'),
    prompt: 'What is the weather in San Francisco?',
    tools: { get_weather: tool({ description: 'Get the current weather at a specific location', inputSchema: weatherInput }) },
    maxRetries: 0,
  });
  t.equal(result.finishReason, 'tool-calls');
  t.match(result.toolCalls, [{ toolName: 'get_weather', input: { location: 'San Francisco, CA', unit: 'fahrenheit' } }]);
  t.match(openaiUpstream.last!.json.tools, [{ type: 'function', name: 'get_weather', parameters: { type: 'object', required: ['location', 'unit'] } }]);
});

t.test('a tool with a jsonSchema schema, executed, and the loop continues to the answer', async (t) => {
  const executed: unknown[] = [];
  const result = await generateText({
    model: openai('gpt-4o-mini'),
    prompt: 'What is the weather in San Francisco?',
    tools: {
      get_weather: tool({
        description: 'Get the current weather at a specific location',
        inputSchema: jsonSchema<{ location: string; unit: string }>({ type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string' } }, required: ['location', 'unit'], additionalProperties: false }),
        execute: async (input) => {
          executed.push(input);
          return { temperature: 64 };
        },
      }),
    },
    stopWhen: stepCountIs(2),
    maxRetries: 0,
  });
  t.same(executed, [{ location: 'San Francisco, CA', unit: 'fahrenheit' }]);
  t.equal(result.steps.length, 2);
  t.equal(result.text, recordedText, 'the second step answers in text');
  const second = openaiUpstream.last!.json;
  t.match(second.input.at(-1), { type: 'function_call_output', output: JSON.stringify({ temperature: 64 }) }, 'the tool result reaches OpenAI');
});

t.test('generateObject asks for a json_schema and returns the parsed object', async (t) => {
  const result = await generateObject({ model: openai('gpt-4o-mini'), schema: z.object({ city: z.string(), country: z.string() }), prompt: PROMPT, maxRetries: 0 });
  t.same(result.object, { city: 'Paris', country: 'Paris' });
  t.match(openaiUpstream.last!.json.text, { format: { type: 'json_schema', schema: { type: 'object', required: ['city', 'country'] } } });
});

t.test('embed and embedMany with openai.embedding(id)', async (t) => {
  const one = await embed({ model: openai.embedding('text-embedding-3-small'), value: 'sunny day at the beach', maxRetries: 0 });
  t.same(one.embedding, fakeVector('sunny day at the beach', FAKE_DIMENSIONS));
  t.ok((one.usage?.tokens ?? 0) > 0, 'usage');
  t.equal(openaiUpstream.last!.url, '/v1/embeddings');
  const values = ['sunny day at the beach', 'rainy day in the city'];
  const many = await embedMany({ model: openai.textEmbeddingModel('text-embedding-3-small'), values, maxRetries: 0 });
  t.same(
    many.embeddings,
    values.map((value) => fakeVector(value, FAKE_DIMENSIONS)),
  );
});

t.test('a claude model through openai(id): the Responses API translated to Anthropic', async (t) => {
  const model = openai('claude-sonnet-4-5');
  const result = await generateText({ model, system: 'Be concise.', prompt: PROMPT, maxRetries: 0 });
  t.equal(result.text, 'The capital of France is Paris.');
  t.match(result.usage, { inputTokens: 2067, outputTokens: 10 });
  t.equal(anthropicUpstream.last!.url, '/v1/messages');
  t.equal(anthropicUpstream.last!.json.system, 'Be concise.');

  const streamed = streamText({ model, prompt: PROMPT, maxRetries: 0, onError: () => {} });
  let text = '';
  for await (const delta of streamed.textStream) text += delta;
  t.equal(text, 'The capital of France is Paris.');
  t.match(await streamed.usage, { outputTokens: 10 });

  const called = await generateText({ model, prompt: 'Weather in Paris?', tools: { get_weather: tool({ inputSchema: weatherInput.partial() }) }, maxRetries: 0 });
  t.match(called.toolCalls, [{ toolName: 'get_weather', input: { location: 'Paris' } }]);
});

t.test('a claude model: a tool loop sends the call back as the SDK sends it (an item_reference while store is on)', async (t) => {
  const result = await generateText({
    model: openai('claude-sonnet-4-5'),
    prompt: 'Weather in Paris?',
    tools: { get_weather: tool({ inputSchema: z.object({ location: z.string() }), execute: async () => ({ temperature: 18 }) }) },
    stopWhen: stepCountIs(2),
    maxRetries: 0,
  });
  t.equal(result.steps.length, 2);
  t.equal(result.text, 'The capital of France is Paris.', 'the second step is the text answer');
  const messages = anthropicUpstream.last!.json.messages;
  const toolUse = messages.at(-2)?.content?.find?.((block: { type: string }) => block.type === 'tool_use');
  t.match(toolUse, { type: 'tool_use', name: 'get_weather', input: { location: 'Paris' } }, 'the earlier call, resolved from the gateway store');
  t.match(messages.at(-1), { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse?.id }] });
});

t.test('a claude model: the same tool loop with store off sends the full function_call item', async (t) => {
  const result = await generateText({
    model: openai('claude-sonnet-4-5'),
    prompt: 'Weather in Paris?',
    tools: { get_weather: tool({ inputSchema: z.object({ location: z.string() }), execute: async () => ({ temperature: 18 }) }) },
    providerOptions: { openai: { store: false } },
    stopWhen: stepCountIs(2),
    maxRetries: 0,
  });
  t.equal(result.steps.length, 2);
  t.equal(result.text, 'The capital of France is Paris.');
  const messages = anthropicUpstream.last!.json.messages;
  const toolUse = messages.at(-2)?.content?.find?.((block: { type: string }) => block.type === 'tool_use');
  t.match(toolUse, { type: 'tool_use', name: 'get_weather', input: { location: 'Paris' } });
  t.match(messages.at(-1), { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse?.id, content: JSON.stringify({ temperature: 18 }) }] });
});

t.test("a conversation continued with the SDK's own response.messages (assistant text as an item_reference while store is on)", async (t) => {
  const model = openai('claude-sonnet-4-5');
  const first = await generateText({ model, prompt: PROMPT, maxRetries: 0 });
  const second = await generateText({ model, messages: [{ role: 'user', content: PROMPT }, ...first.response.messages, { role: 'user', content: 'And of Italy?' }], maxRetries: 0 });
  t.equal(second.text, 'The capital of France is Paris.');
  const messages: Array<{ role: string; content: unknown }> = anthropicUpstream.last!.json.messages;
  t.same(
    messages.map((message) => message.role),
    ['user', 'assistant', 'user'],
  );
  t.match(JSON.stringify(messages[1]!.content), 'The capital of France is Paris.', 'the earlier answer, resolved from the gateway store');
  t.match(JSON.stringify(messages[2]!.content), 'And of Italy?');
});
