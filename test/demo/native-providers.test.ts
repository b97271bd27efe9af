// The demo's simulated Anthropic, Gemini, Cohere and Mistral servers speak their native protocols
// well enough for the real adapters: through the gateway and the OpenAI SDK, each answers plain and
// streamed requests with usage and a price, calls a tool (streamed too) and answers from its
// result, and its simulated failures reach the client as the gateway's 429 or 503.
import t from 'tap';
import type { OpenAI } from 'openai';
import { startSimulation, type Simulation } from '../../demo/simulation.js';
import { startGateway, type TestGateway, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { checkChunk, checkCompletion } from '../helpers/schema.js';
import { schemaErrors } from '../helpers/json-schema.js';

const MODELS = [
  ['anthropic', 'anthropic/claude-sonnet-4-5'],
  ['google', 'google/gemini-2.5-flash'],
  ['cohere', 'cohere/command-a-03-2025'],
  ['mistral', 'mistral/mistral-small-latest'],
] as const;

let simulation: Simulation;
let gateway: TestGateway;

t.before(async () => {
  simulation = await startSimulation({ failureRate: 0, speed: 0 });
  gateway = await startGateway(simulation.env);
});
t.after(async () => {
  await gateway.close();
  await simulation.close();
});

const tool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'] } },
};

async function collect(stream: AsyncIterable<OpenAI.ChatCompletionChunk>): Promise<OpenAI.ChatCompletionChunk[]> {
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const finishOf = (chunks: OpenAI.ChatCompletionChunk[]) => chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0]!.finish_reason;
const textOf = (chunks: OpenAI.ChatCompletionChunk[]) => chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');

for (const [provider, model] of MODELS) {
  t.test(`the simulated ${provider} answers, non-stream and streamed, with usage and a price`, async (t) => {
    const { data, response } = await gateway.client().chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello!' }] }).withResponse();
    t.equal(checkCompletion(data), null);
    t.equal(response.headers.get('x-modelgate-provider'), provider);
    t.match(data.choices[0]!.message.content, /simulat|demo/i);
    t.equal(data.choices[0]!.finish_reason, 'stop');
    t.ok(data.usage!.prompt_tokens > 0 && data.usage!.completion_tokens > 0);
    t.ok(Number(response.headers.get('x-modelgate-cost')) > 0, 'priced');

    const chunks = await collect(await gateway.client().chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello!' }], stream: true, stream_options: { include_usage: true } }));
    for (const chunk of chunks) t.equal(checkChunk(chunk), null);
    t.ok(textOf(chunks).length > 20, 'text arrived');
    t.equal(finishOf(chunks), 'stop');
    t.strictSame(chunks.at(-1)!.choices, [], 'the usage chunk comes last');
    t.ok(chunks.at(-1)!.usage!.completion_tokens > 0 && chunks.at(-1)!.usage!.total_tokens > 0);
  });

  t.test(`the simulated ${provider} calls a tool, streamed or not, and answers from its result`, async (t) => {
    const client = gateway.client();
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Oslo?' }];
    const first = await client.chat.completions.create({ model, messages, tools: [tool] });
    t.equal(checkCompletion(first), null);
    t.equal(first.choices[0]!.finish_reason, 'tool_calls');
    const call = first.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    t.equal(call.function.name, 'get_weather');
    const args = JSON.parse(call.function.arguments);
    t.equal(schemaErrors(tool.function.parameters!, args), null, 'the arguments are valid against the parameters');
    t.equal(args.city, 'Oslo', 'the city is the one the prompt names');

    const streamed = await collect(await client.chat.completions.create({ model, messages, tools: [tool], stream: true }));
    for (const chunk of streamed) t.equal(checkChunk(chunk), null);
    const streamedArgs = streamed.map((c) => c.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '').join('');
    t.same(JSON.parse(streamedArgs), args, 'streamed arguments assemble to the same call');
    t.equal(finishOf(streamed), 'tool_calls');

    messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '{"forecast":"snow"}' });
    const second = await client.chat.completions.create({ model, messages, tools: [tool] });
    t.equal(second.choices[0]!.finish_reason, 'stop');
    t.match(second.choices[0]!.message.content, /tool result says: .*snow/);
    const secondStreamed = await collect(await client.chat.completions.create({ model, messages, tools: [tool], stream: true }));
    t.match(textOf(secondStreamed), /tool result says: .*snow/);
  });
}

t.test("the simulated failures arrive as each provider's errors, mapped to 429 or 503", async (t) => {
  const failing = await startSimulation({ failureRate: 1, speed: 0 });
  const broken = await startGateway({ ...failing.env, ...PROTOCOL_ONLY });
  try {
    for (const [, model] of MODELS) {
      const error = await broken.client().chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello!' }] }).catch((e: unknown) => e);
      t.match(error, { status: /^(429|503)$/, message: /Provider unavailable|Rate limit exceeded/ }, model);
    }
  } finally {
    await broken.close();
    await failing.close();
  }
});

// Listening servers keep the event loop alive: end the root test explicitly so t.after runs.
t.end();
