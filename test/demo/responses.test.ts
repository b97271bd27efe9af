// The table against the demo's simulated providers: the openai SDK's Responses calls (an
// OpenAI model through the simulated OpenAI's own /v1/responses, other providers' models
// translated), streamed and not, with tools and structured output, and its embeddings call.
import t from 'tap';
import { startSimulation } from '../../demo/simulation.js';
import { startGateway } from '../helpers/gateway.js';

const simulation = await startSimulation({ failureRate: 0, speed: 0 });
const gateway = await startGateway(simulation.env);
t.teardown(async () => {
  await gateway.close();
  await simulation.close();
});

const weather = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

for (const model of ['gpt-4o-mini', 'claude-sonnet-4-5', 'gemini-2.5-flash']) {
  t.test(`${model}: text, stream, tools and a JSON schema through /v1/responses`, async (t) => {
    const client = gateway.client();
    const text = await client.responses.create({ model, input: 'Say hello.' }).withResponse();
    t.ok(text.data.output_text.length > 0, 'text');
    t.equal(text.response.headers.get('x-modelgate-model'), model);
    t.ok(text.data.usage!.input_tokens > 0);

    const stream = await client.responses.create({ model, input: 'Say hello.', stream: true });
    let streamed = '';
    let completed = false;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') streamed += event.delta;
      if (event.type === 'response.completed') completed = event.response.usage!.output_tokens > 0;
    }
    t.ok(streamed.length > 0 && completed, 'streamed text and a completed response with usage');

    const tool = await client.responses.create({ model, input: 'What is the weather in Paris?', tools: [weather], tool_choice: 'required' });
    const call = tool.output.find((item) => item.type === 'function_call');
    t.ok(call && call.type === 'function_call' && call.name === 'get_weather' && typeof JSON.parse(call.arguments).city === 'string', 'a function call with valid arguments');

    const structured = await client.responses.create({
      model,
      input: 'Give a city.',
      text: { format: { type: 'json_schema', name: 'city', schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false }, strict: true } },
    });
    t.type(JSON.parse(structured.output_text).name, 'string', 'JSON that fits the schema');
  });
}

t.test('embeddings from the simulated providers', async (t) => {
  const client = gateway.client();
  for (const model of ['text-embedding-3-small', 'gemini-embedding-001', 'embed-english-v3.0', 'mistral-embed']) {
    const answer = await client.embeddings.create({ model, input: ['hello', 'world'] });
    t.equal(answer.data.length, 2, model);
    t.ok(answer.data[0]!.embedding.length > 0);
  }
});
