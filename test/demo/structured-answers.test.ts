// The demo answers what the client asked for, through the real gateway and the OpenAI SDK, from
// each simulated provider in its native protocol (pinned with provider/model), streamed or not:
// JSON for json_object, an instance of the schema for json_schema (checked with ajv), tool calls
// when tool_choice requires or names one or the prompt is about a tool (arguments valid against the
// tool's parameters), and prose when tool_choice is "none" or nothing calls for a tool.
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OpenAI } from 'openai';
import { startSimulation, type Simulation } from '../../demo/simulation.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { schemaErrors } from '../helpers/json-schema.js';

/** Every simulated protocol, and both of Gemini's schema dialects (responseJsonSchema from 2.5, responseSchema before). */
const PINNED = [
  'openai/gpt-4o-mini',
  'anthropic/claude-sonnet-4-5',
  'google/gemini-2.5-flash',
  'google/gemini-2.0-flash',
  'cohere/command-a-03-2025',
  'mistral/mistral-small-latest',
  'custom/llama-3.1-8b-instruct',
] as const;

const weatherReport = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    forecast: {
      type: 'array',
      minItems: 2,
      maxItems: 4,
      items: {
        type: 'object',
        properties: {
          date: { type: 'string', format: 'date' },
          high_c: { type: 'number', minimum: -40, maximum: 50 },
          conditions: { type: 'string', enum: ['sunny', 'cloudy', 'rain', 'snow'] },
        },
        required: ['date', 'high_c', 'conditions'],
        additionalProperties: false,
      },
    },
    advisory: { type: ['string', 'null'] },
  },
  required: ['city', 'forecast', 'advisory'],
  additionalProperties: false,
};

const tools: OpenAI.ChatCompletionFunctionTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather and forecast for a city',
      parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1, maximum: 7 } }, required: ['city'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'book_table',
      description: 'Reserve a restaurant table',
      parameters: {
        type: 'object',
        properties: { restaurant: { type: 'string' }, party_size: { type: 'integer', minimum: 1, maximum: 12 }, at: { type: 'string', format: 'date-time' } },
        required: ['restaurant', 'party_size', 'at'],
        additionalProperties: false,
      },
    },
  },
];

interface Answer {
  content: string;
  calls: Array<{ name: string; arguments: string }>;
  finish: string | null | undefined;
}

let simulation: Simulation;
let gateway: TestGateway;
let catalogDir: string;

t.before(async () => {
  simulation = await startSimulation({ failureRate: 0, speed: 0 });
  // The catalog does not claim structured output for Cohere (its price source does not state it),
  // so the router would refuse a json_schema request there; Cohere documents it for Command A, and
  // an operator says so in their catalog file, as this one does.
  catalogDir = mkdtempSync(join(tmpdir(), 'modelgate-demo-catalog-'));
  const demoCatalog = JSON.parse(readFileSync(simulation.env.MODELGATE_MODEL_CATALOG!, 'utf8')) as { models: unknown[] };
  const catalog = join(catalogDir, 'catalog.json');
  writeFileSync(catalog, JSON.stringify({ models: [...demoCatalog.models, { provider: 'cohere', id: 'command-a-03-2025', capabilities: { json_schema: true } }] }));
  gateway = await startGateway({ ...simulation.env, MODELGATE_MODEL_CATALOG: catalog, MODELGATE_CACHE_ENABLED: 'false' });
});
t.after(async () => {
  await gateway.close();
  await simulation.close();
  rmSync(catalogDir, { recursive: true, force: true });
});

/** One request, streamed or not, read back the same way: text, tool calls (fragments assembled) and finish reason. */
async function ask(params: OpenAI.ChatCompletionCreateParamsNonStreaming, stream: boolean): Promise<Answer> {
  const client = gateway.client();
  if (!stream) {
    const choice = (await client.chat.completions.create(params)).choices[0]!;
    const calls = (choice.message.tool_calls ?? []).map((call) => (call as OpenAI.ChatCompletionMessageFunctionToolCall).function);
    return { content: choice.message.content ?? '', calls: calls.map(({ name, arguments: args }) => ({ name, arguments: args })), finish: choice.finish_reason };
  }
  const answer: Answer = { content: '', calls: [], finish: undefined };
  for await (const chunk of await client.chat.completions.create({ ...params, stream: true })) {
    const choice = chunk.choices[0];
    if (!choice) continue;
    answer.content += choice.delta.content ?? '';
    (choice.delta.tool_calls ?? []).forEach((fragment, position) => {
      const call = (answer.calls[fragment.index ?? position] ??= { name: '', arguments: '' });
      call.name ||= fragment.function?.name ?? '';
      call.arguments += fragment.function?.arguments ?? '';
    });
    answer.finish = choice.finish_reason ?? answer.finish;
  }
  return answer;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return `not JSON: ${text}`;
  }
}

const user = (content: string): OpenAI.ChatCompletionMessageParam[] => [{ role: 'user', content }];
const parametersOf = (name: string) => tools.find((tool) => tool.function.name === name)!.function.parameters!;

for (const model of PINNED) {
  for (const stream of [false, true]) {
    const how = stream ? 'streamed' : 'not streamed';

    t.test(`${model}, ${how}: json_object is answered with a JSON object`, async (t) => {
      const answer = await ask({ model, messages: user('Answer in JSON: what is the weather in Oslo?'), response_format: { type: 'json_object' } }, stream);
      t.equal(answer.finish, 'stop');
      t.type(parse(answer.content), 'object', answer.content);
      t.notOk(Array.isArray(parse(answer.content)), 'an object, not an array');
    });

    t.test(`${model}, ${how}: json_schema is answered with JSON valid against the schema`, async (t) => {
      const answer = await ask(
        { model, messages: user('Three-day weather report for Oslo'), response_format: { type: 'json_schema', json_schema: { name: 'weather_report', strict: true, schema: weatherReport } } },
        stream,
      );
      t.equal(answer.finish, 'stop');
      t.equal(schemaErrors(weatherReport, parse(answer.content)), null, answer.content);
      t.match(parse(answer.content), { city: 'Oslo' }, 'plausible: the city the prompt names');
    });

    t.test(`${model}, ${how}: tool_choice auto calls the tool the prompt is about, and only then`, async (t) => {
      const weather = await ask({ model, messages: user("What's the weather in Lisbon this week?"), tools, tool_choice: 'auto' }, stream);
      t.equal(weather.finish, 'tool_calls');
      t.same(weather.calls.map((call) => call.name), ['get_weather']);
      t.equal(schemaErrors(parametersOf('get_weather'), parse(weather.calls[0]?.arguments ?? '')), null, weather.calls[0]?.arguments);

      const unrelated = await ask({ model, messages: user('Tell me a joke.'), tools }, stream);
      t.equal(unrelated.finish, 'stop', 'nothing in the prompt calls for a tool: prose');
      t.same(unrelated.calls, []);
      t.ok(unrelated.content.length > 0);
    });

    t.test(`${model}, ${how}: tool_choice required or naming a function always calls one, with valid arguments`, async (t) => {
      const required = await ask({ model, messages: user('Tell me a joke.'), tools, tool_choice: 'required' }, stream);
      t.equal(required.finish, 'tool_calls');
      t.equal(required.calls.length, 1);
      t.equal(schemaErrors(parametersOf(required.calls[0]!.name), parse(required.calls[0]!.arguments)), null, required.calls[0]!.arguments);

      const named = await ask({ model, messages: user("What's the weather in Lisbon?"), tools, tool_choice: { type: 'function', function: { name: 'book_table' } } }, stream);
      t.equal(named.finish, 'tool_calls');
      t.same(named.calls.map((call) => call.name), ['book_table'], 'the named function, though the prompt is about weather');
      t.equal(schemaErrors(parametersOf('book_table'), parse(named.calls[0]?.arguments ?? '')), null, named.calls[0]?.arguments);
    });

    t.test(`${model}, ${how}: tool_choice none answers in prose, and so does the turn after a tool result`, async (t) => {
      const none = await ask({ model, messages: user("What's the weather in Lisbon?"), tools, tool_choice: 'none' }, stream);
      t.equal(none.finish, 'stop');
      t.same(none.calls, []);

      const call = { id: 'call_1', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Lisbon"}' } };
      const messages: OpenAI.ChatCompletionMessageParam[] = [
        ...user("What's the weather in Lisbon?"),
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"conditions":"sunny","high_c":24}' },
      ];
      const after = await ask({ model, messages, tools }, stream);
      t.equal(after.finish, 'stop');
      t.same(after.calls, []);
      t.match(after.content, /sunny/, 'the answer uses the tool result');
    });
  }
}

t.test('like the real API, the simulated OpenAI refuses json_object when no message mentions JSON', async (t) => {
  const refused = await gateway
    .client()
    .chat.completions.create({ model: 'openai/gpt-4o-mini', messages: user('What is the weather in Oslo?'), response_format: { type: 'json_object' } })
    .catch((error: unknown) => error);
  t.match(refused, { status: 400, message: /must contain the word 'json'/ });
});

// Listening servers keep the event loop alive: end the root test explicitly so t.after runs.
t.end();
