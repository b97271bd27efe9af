// The demo's simulated Anthropic and Gemini servers, through the real gateway and the OpenAI SDK:
// answers, streams, tool calls and their round trips come back as an OpenAI client expects them.
import t from 'tap';
import type { OpenAI } from 'openai';
import { startSimulation, type Simulation } from '../../demo/simulation.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
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

const tool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'] } },
};

for (const [model, provider] of [
  ['anthropic/claude-sonnet-4-5', 'anthropic'],
  ['google/gemini-2.5-flash', 'google'],
] as const) {
  t.test(`${model}: a simulated answer, non-stream and streamed, with usage`, async (t) => {
    const { data, response } = await gateway.client().chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello!' }] }).withResponse();
    t.equal(checkCompletion(data), null);
    t.equal(response.headers.get('x-modelgate-provider'), provider);
    t.match(data.choices[0]!.message.content, /simulat|demo/i);
    t.equal(data.choices[0]!.finish_reason, 'stop');
    t.ok(data.usage!.prompt_tokens > 0 && data.usage!.completion_tokens > 0);

    const stream = await gateway.client().chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello!' }], stream: true, stream_options: { include_usage: true } });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    for (const chunk of chunks) t.equal(checkChunk(chunk), null);
    t.ok(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('').length > 20, 'text arrived');
    t.equal(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0]!.finish_reason, 'stop');
    t.ok(chunks.at(-1)!.usage!.total_tokens > 0, 'the usage chunk is last');
  });

  t.test(`${model}: a simulated tool call, and the answer to its result`, async (t) => {
    const client = gateway.client();
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Oslo?' }];
    const first = await client.chat.completions.create({ model, messages, tools: [tool] });
    t.equal(checkCompletion(first), null);
    t.equal(first.choices[0]!.finish_reason, 'tool_calls');
    const call = first.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    t.equal(call.function.name, 'get_weather');
    t.same(JSON.parse(call.function.arguments), { city: 'example city', days: 42 });

    const streamed = await client.chat.completions.create({ model, messages, tools: [tool], stream: true });
    let args = '';
    for await (const chunk of streamed) args += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '';
    t.same(JSON.parse(args), { city: 'example city', days: 42 }, 'streamed arguments assemble to the same call');

    messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '{"forecast":"snow"}' });
    const second = await client.chat.completions.create({ model, messages, tools: [tool] });
    t.equal(second.choices[0]!.finish_reason, 'stop');
    t.match(second.choices[0]!.message.content, /tool result says: .*snow/);
  });
}

// Listening servers keep the event loop alive: end the root test explicitly so t.after runs.
t.end();
