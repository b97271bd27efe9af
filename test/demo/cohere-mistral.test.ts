// The demo's simulated Cohere and Mistral speak their native protocols well enough for the real
// adapters: through the gateway and the OpenAI SDK, each answers plain and streamed requests with
// usage, and calls a tool, then answers from the tool's result.
import t from 'tap';
import type OpenAI from 'openai';
import { startSimulation, type Simulation } from '../../demo/simulation.js';
import { startGateway, type TestGateway, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { checkChunk, checkCompletion } from '../helpers/schema.js';

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

const lookup: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'lookup_order', parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] } },
};

for (const [provider, model] of [
  ['cohere', 'cohere/command-a-03-2025'],
  ['mistral', 'mistral/mistral-small-latest'],
] as const) {
  t.test(`the simulated ${provider} answers through the gateway, priced`, async (t) => {
    const { data, response } = await gateway.client().chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello!' }] }).withResponse();
    t.equal(checkCompletion(data), null);
    t.ok(data.choices[0]!.message.content!.length > 0);
    t.equal(data.choices[0]!.finish_reason, 'stop');
    t.ok(data.usage!.prompt_tokens > 0 && data.usage!.completion_tokens > 0);
    t.equal(response.headers.get('x-modelgate-provider'), provider);
    t.ok(Number(response.headers.get('x-modelgate-cost')) > 0);
  });

  t.test(`the simulated ${provider} streams text and usage`, async (t) => {
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    const stream = await gateway.client().chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello!' }], stream: true, stream_options: { include_usage: true } });
    for await (const chunk of stream) chunks.push(chunk);
    for (const chunk of chunks) t.equal(checkChunk(chunk), null);
    t.ok(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('').length > 0);
    t.ok(chunks.at(-1)!.usage!.completion_tokens > 0, 'the usage chunk comes last');
  });

  t.test(`the simulated ${provider} calls a tool and answers from its result`, async (t) => {
    const client = gateway.client();
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Where is order 42?' }];
    const first = await client.chat.completions.create({ model, messages, tools: [lookup] });
    t.equal(first.choices[0]!.finish_reason, 'tool_calls');
    const call = first.choices[0]!.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    t.equal(call.function.name, 'lookup_order');
    t.strictSame(Object.keys(JSON.parse(call.function.arguments)), ['order_id']);
    messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: 'shipped yesterday' });
    const second = await client.chat.completions.create({ model, messages, tools: [lookup], stream: true });
    let text = '';
    for await (const chunk of second) text += chunk.choices[0]?.delta.content ?? '';
    t.match(text, /shipped yesterday/);
  });
}

t.test("the simulated failures arrive as each provider's errors, mapped to 429 or 503", async (t) => {
  const failing = await startSimulation({ failureRate: 1, speed: 0 });
  const broken = await startGateway({ ...failing.env, ...PROTOCOL_ONLY });
  try {
    for (const model of ['cohere/command-a-03-2025', 'mistral/mistral-small-latest']) {
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
