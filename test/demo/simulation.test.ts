// The demo's simulated providers behind the real gateway: a newcomer's first requests work.
import t from 'tap';
import { startSimulation, PROTOCOLS } from '../../demo/simulation.js';
import { startGateway, GATEWAY_KEY } from '../helpers/gateway.js';
import { checkChunk, checkCompletion } from '../helpers/schema.js';

const simulation = await startSimulation({ failureRate: 0, speed: 0 });
const gateway = await startGateway(simulation.env);
t.teardown(async () => {
  await gateway.close();
  await simulation.close();
});

t.test('every simulated provider is configured', async (t) => {
  // Health names the providers only to a client with a key.
  const health = (await fetch(`${gateway.url}/health`, { headers: { authorization: `Bearer ${GATEWAY_KEY}` } }).then((r) => r.json())) as { providers: { configured: string[] } };
  t.same([...health.providers.configured].sort(), PROTOCOLS.map((p) => p.provider).sort());
});

t.test('auto, a named model and a custom model answer, stream and not', async (t) => {
  const client = gateway.client();
  for (const model of ['auto', 'gpt-4o-mini', 'llama-3.1-8b-instruct']) {
    const { data, response } = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello!' }] }).withResponse();
    t.equal(checkCompletion(data), null, model);
    t.ok(data.choices[0]!.message.content, `${model} answered`);
    t.ok(Number(response.headers.get('x-modelgate-cost')) > 0, `${model} was priced`);
    const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello!' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage = 0;
    for await (const chunk of stream) {
      t.equal(checkChunk(chunk), null);
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage?.completion_tokens ?? usage;
    }
    t.ok(text.length > 0 && usage > 0, `${model} streamed with usage`);
  }
});

t.test('a tool call and its result round trip', async (t) => {
  const client = gateway.client();
  const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
  const first = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools });
  const call = first.choices[0]!.message.tool_calls![0]!;
  t.equal(first.choices[0]!.finish_reason, 'tool_calls');
  t.equal(call.type === 'function' && call.function.name, 'get_weather');
  const second = await client.chat.completions.create({
    model: 'gpt-4o-mini',
    tools,
    messages: [{ role: 'user', content: 'Weather in Paris?' }, first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '18C' }],
  });
  t.match(second.choices[0]!.message.content, /18C/);
});

t.end();
