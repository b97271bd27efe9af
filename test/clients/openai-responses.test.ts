// The OpenAI SDK's Responses API (client.responses) against the gateway, two ways: a gpt model, which
// the gateway sends on to OpenAI's own /v1/responses (a fake replaying recorded answers), and a
// claude model, which it translates to Anthropic's Messages API and back. Every answer and every
// stream event is checked against the published Responses schema; what each upstream received is
// checked too. One gateway serves the whole file.
import t, { type Test } from 'tap';
import OpenAI from 'openai';
import type { ResponseStreamEvent, ResponseFunctionToolCall, ResponseInputItem, FunctionTool } from 'openai/resources/responses/responses';
import { startGateway, call, PROTOCOL_ONLY, type TestGateway } from '../helpers/gateway.js';
import { startFakeAnthropic, startFakeCohere, startFakeGemini, startFakeMistral, startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { fixture, fixtureJson, json, sse, type FakeProvider } from '../helpers/fake-provider.js';
import { keyStore } from '../helpers/keys.js';
import { checkResponse, checkStreamEvents, type Known } from '../helpers/responses-schema.js';

const OTHER_KEY = 'uc_other_tenant_0123456789abcdef';
// Two keys of one tenant: stored responses belong to the key that made them, not to its tenant.
const SIBLING_A = 'uc_sibling_a_0123456789abcdef';
const SIBLING_B = 'uc_sibling_b_0123456789abcdef';

let openaiUpstream: FakeProvider;
let anthropicUpstream: FakeProvider;
let others: { google: FakeProvider; cohere: FakeProvider; mistral: FakeProvider };
let gateway: TestGateway;

t.before(async () => {
  openaiUpstream = await startFakeOpenAI();
  anthropicUpstream = await startFakeAnthropic();
  others = { google: await startFakeGemini(), cohere: await startFakeCohere(), mistral: await startFakeMistral() };
  gateway = await startGateway(
    {
      ...PROTOCOL_ONLY,
      OPENAI_API_KEY: PROVIDER_KEYS.openai,
      OPENAI_BASE_URL: `${openaiUpstream.url}/v1`,
      ANTHROPIC_API_KEY: PROVIDER_KEYS.anthropic,
      ANTHROPIC_BASE_URL: anthropicUpstream.url,
      GOOGLE_API_KEY: PROVIDER_KEYS.google,
      GOOGLE_BASE_URL: others.google.url,
      COHERE_API_KEY: PROVIDER_KEYS.cohere,
      COHERE_BASE_URL: others.cohere.url,
      MISTRAL_API_KEY: PROVIDER_KEYS.mistral,
      MISTRAL_BASE_URL: others.mistral.url,
    },
    { keyStores: [keyStore({ [OTHER_KEY]: {}, [SIBLING_A]: { tenant: 'acme' }, [SIBLING_B]: { tenant: 'acme' } })] },
  );
});
t.teardown(async () => {
  await gateway?.close();
  await openaiUpstream?.close();
  await anthropicUpstream?.close();
  for (const upstream of Object.values(others ?? {})) await upstream.close();
});
t.beforeEach(() => {
  openaiUpstream.reset();
  anthropicUpstream.reset();
});

interface Row {
  name: string;
  model: string;
  upstream: () => FakeProvider;
  /** The path the upstream is called on. */
  path: string;
  text: string;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number; cached_tokens: number };
  toolArguments: Record<string, unknown>;
}

const recorded = fixtureJson('openai-responses/response.json');
const rows: Row[] = [
  {
    name: 'OpenAI (native /v1/responses)',
    model: 'gpt-4o-mini',
    upstream: () => openaiUpstream,
    path: '/v1/responses',
    text: recorded.output[0].content[0].text,
    usage: { input_tokens: 14, output_tokens: 50, total_tokens: 64, cached_tokens: 0 },
    toolArguments: { location: 'San Francisco, CA', unit: 'fahrenheit' },
  },
  {
    name: 'Anthropic (translated to Messages)',
    model: 'claude-sonnet-4-5',
    upstream: () => anthropicUpstream,
    path: '/v1/messages',
    text: 'The capital of France is Paris.',
    // 19 fresh + 2048 cache-read input tokens in the fixture
    usage: { input_tokens: 2067, output_tokens: 10, total_tokens: 2077, cached_tokens: 2048 },
    toolArguments: { location: 'Paris' },
  },
];

const QUESTION = 'What is the capital of France?';
const weatherTool: FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Get the current weather at a specific location',
  parameters: { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['location', 'unit'], additionalProperties: false },
  strict: true,
};

/** The text stream's event order, with the run of deltas as one entry. */
const TEXT_ORDER = [
  'response.created',
  'response.in_progress',
  'response.output_item.added',
  'response.content_part.added',
  'response.output_text.delta',
  'response.output_text.done',
  'response.content_part.done',
  'response.output_item.done',
  'response.completed',
];

function collapsed(types: string[]): string[] {
  return types.filter((type, index) => type !== types[index - 1]);
}

async function collect(stream: AsyncIterable<ResponseStreamEvent>): Promise<ResponseStreamEvent[]> {
  const events: ResponseStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The stream's invariants every client relies on; the event schema problems are returned for t.same(…, []). */
function checkStream(t: Test, events: ResponseStreamEvent[]): void {
  t.same(
    events.map((event) => event.sequence_number),
    events.map((_, index) => index),
    'sequence_number runs 0..n',
  );
  const { problems, applied } = checkStreamEvents(events);
  t.same(problems, [], 'every event is valid against its schema $def and ResponseStreamEvent');
  if (applied.size > 0) t.comment(`known spec-vs-wire normalisations applied: ${[...applied].join(', ')}`);
  const added = events.filter((event) => event.type === 'response.output_item.added').map((event) => event.item.id);
  const done = events.filter((event) => event.type === 'response.output_item.done').map((event) => event.item.id);
  t.same(done, added, 'every output item added is done, in order');
  const ids = new Set(events.flatMap((event) => ('response' in event ? [event.response.id] : [])));
  t.equal(ids.size, 1, 'created, in_progress and completed name the same response');
}

for (const row of rows) {
  t.test(`${row.name}: responses.create answers with output_text and usage, schema-valid`, async (t) => {
    const response = await gateway.client().responses.create({ model: row.model, input: QUESTION, instructions: 'Be concise.', max_output_tokens: 200, temperature: 0.2, metadata: { case: 'basic' } });
    const applied = new Set<Known>();
    t.equal(checkResponse(response, applied), null);
    if (applied.size > 0) t.comment(`known normalisations: ${[...applied].join(', ')}`);
    t.equal(response.object, 'response');
    t.equal(response.status, 'completed');
    t.match(response.id, /^resp_/);
    t.equal(response.output_text, row.text);
    t.match(response.usage, { input_tokens: row.usage.input_tokens, output_tokens: row.usage.output_tokens, total_tokens: row.usage.total_tokens, input_tokens_details: { cached_tokens: row.usage.cached_tokens } });
    t.same(response.metadata, { case: 'basic' }, 'metadata is echoed');
    const seen = row.upstream().last!;
    t.equal(seen?.url, row.path);
    if (row.path === '/v1/messages') {
      t.equal(seen.json.system, 'Be concise.', 'instructions become the system prompt');
      t.same(seen.json.messages, [{ role: 'user', content: QUESTION }]);
      t.equal(seen.json.max_tokens, 200, 'max_output_tokens becomes max_tokens');
      t.equal(seen.json.temperature, 0.2);
    } else {
      t.equal(seen.json.instructions, 'Be concise.');
      t.match(JSON.stringify(seen.json.input), JSON.stringify(QUESTION), 'the input, as a string or one user message');
      t.equal(seen.json.max_output_tokens, 200);
      t.equal(seen.headers.authorization, `Bearer ${PROVIDER_KEYS.openai}`, 'the provider key, never the uc_ key');
    }
  });

  t.test(`${row.name}: create({stream:true}) sends the Responses events in order, each schema-valid`, async (t) => {
    const events = await collect(await gateway.client().responses.create({ model: row.model, input: QUESTION, stream: true }));
    t.same(collapsed(events.map((event) => event.type)), TEXT_ORDER);
    checkStream(t, events);
    const deltas = events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : []));
    const done = events.find((event) => event.type === 'response.output_text.done');
    t.equal(done?.type === 'response.output_text.done' && done.text, deltas.join(''), 'the deltas add up to the done text');
    const completed = events.at(-1);
    if (completed?.type === 'response.completed') {
      t.equal(completed.response.status, 'completed');
      t.ok(completed.response.usage && completed.response.usage.output_tokens > 0, 'usage in response.completed');
    }
    t.equal(row.upstream().last?.json.stream, true);
  });

  t.test(`${row.name}: on the wire, each event is named by its type and the stream ends without [DONE]`, async (t) => {
    const raw = await call(gateway.url, '/responses', { body: JSON.stringify({ model: row.model, input: QUESTION, stream: true }) });
    t.equal(raw.status, 200);
    t.match(raw.headers.get('content-type'), /^text\/event-stream/);
    const frames = raw.text.split(/\r?\n\r?\n/).filter((frame) => frame.trim() !== '');
    t.notOk(raw.text.includes('[DONE]'), 'no [DONE]: the Responses API ends on its terminal event');
    const named = frames.map((frame) => {
      const event = /^event: ?(.*)$/m.exec(frame)?.[1];
      const data = JSON.parse(/^data: ?(.*)$/m.exec(frame)?.[1] ?? 'null');
      return { event, type: data?.type };
    });
    t.same(
      named.filter(({ event, type }) => event !== type),
      [],
      'event: equals the payload type in every frame',
    );
    t.equal(named.at(-1)?.type, 'response.completed');
  });

  t.test(`${row.name}: responses.stream() gives the text and the final response`, async (t) => {
    const stream = gateway.client().responses.stream({ model: row.model, input: QUESTION });
    let text = '';
    for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
    const final = await stream.finalResponse();
    t.equal(text, final.output_text);
    t.ok(final.output_text.length > 0);
    t.equal(final.status, 'completed');
    if (row.model === 'claude-sonnet-4-5') t.equal(final.output_text, row.text);
  });

  t.test(`${row.name}: a function tool is called, and its output sent back gets the answer`, async (t) => {
    const client = gateway.client();
    const first = await client.responses.create({ model: row.model, input: 'What is the weather like?', tools: [weatherTool], tool_choice: 'auto' });
    t.equal(checkResponse(first), null);
    const call = first.output.find((item): item is ResponseFunctionToolCall => item.type === 'function_call');
    t.ok(call, 'a function_call output item');
    if (!call) return;
    t.equal(call.name, 'get_weather');
    t.same(JSON.parse(call.arguments), row.toolArguments);
    t.ok(call.call_id, 'with a call_id');
    const offered = row.upstream().last!.json;
    if (row.path === '/v1/messages') {
      t.match(offered.tools, [{ name: 'get_weather', input_schema: weatherTool.parameters }]);
    } else {
      t.match(offered.tools, [{ type: 'function', name: 'get_weather' }]);
      t.equal(offered.tool_choice, 'auto');
    }

    const input: ResponseInputItem[] = [
      { role: 'user', content: 'What is the weather like?' },
      ...(first.output as ResponseInputItem[]),
      { type: 'function_call_output', call_id: call.call_id, output: '{"temperature":18,"unit":"celsius"}' },
    ];
    const second = await client.responses.create({ model: row.model, input, tools: [weatherTool] });
    t.equal(checkResponse(second), null);
    t.notOk(second.output.some((item) => item.type === 'function_call'), 'no second call');
    t.ok(second.output_text.length > 0, 'a text answer');
    const sent = row.upstream().last!.json;
    if (row.path === '/v1/messages') {
      const last = sent.messages.at(-1);
      t.equal(last.role, 'user');
      t.match(last.content, [{ type: 'tool_result', tool_use_id: call.call_id }], 'the output reaches Anthropic as a tool_result');
      t.match(JSON.stringify(last.content), /temperature/);
      const assistant = sent.messages.at(-2);
      t.equal(assistant.role, 'assistant');
      t.match(
        assistant.content.find((block: { type: string }) => block.type === 'tool_use'),
        { type: 'tool_use', id: call.call_id, name: 'get_weather', input: row.toolArguments },
        'the answer follows its tool_use',
      );
    } else {
      t.match(sent.input.at(-1), { type: 'function_call_output', call_id: call.call_id, output: '{"temperature":18,"unit":"celsius"}' });
      t.ok(sent.input.some((item: { type?: string }) => item.type === 'function_call'), 'the call itself is sent back too');
    }
  });

  t.test(`${row.name}: a streamed function call arrives as argument deltas that add up`, async (t) => {
    const events = await collect(await gateway.client().responses.create({ model: row.model, input: 'What is the weather like?', tools: [weatherTool], stream: true }));
    checkStream(t, events);
    t.equal(events[0]?.type, 'response.created');
    t.equal(events.at(-1)?.type, 'response.completed');
    const deltas = events.flatMap((event) => (event.type === 'response.function_call_arguments.delta' ? [event.delta] : []));
    const done = events.find((event) => event.type === 'response.function_call_arguments.done');
    t.ok(deltas.length > 0, 'argument deltas');
    t.equal(done?.type === 'response.function_call_arguments.done' && done.arguments, deltas.join(''));
    const item = events.find((event) => event.type === 'response.output_item.done' && event.item.type === 'function_call');
    t.same(item?.type === 'response.output_item.done' && item.item.type === 'function_call' && JSON.parse(item.item.arguments), row.toolArguments);
  });

  t.test(`${row.name}: text.format json_schema reaches the upstream`, async (t) => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    const response = await gateway.client().responses.create({
      model: row.model,
      input: QUESTION,
      text: { format: { type: 'json_schema', name: 'capital', schema, strict: true } },
    });
    t.equal(checkResponse(response), null);
    const sent = row.upstream().last!.json;
    if (row.path === '/v1/messages') {
      t.same(sent.output_config?.format, { type: 'json_schema', schema }, 'as Anthropic structured output');
    } else {
      t.match(sent.text?.format, { type: 'json_schema', name: 'capital', schema, strict: true });
      t.same(JSON.parse(response.output_text), { city: 'Paris' }, 'the structured answer comes back as the text');
    }
  });

  t.test(`${row.name}: previous_response_id continues a stored response`, async (t) => {
    const client = gateway.client();
    const first = await client.responses.create({ model: row.model, input: QUESTION, instructions: 'Be concise.' });
    const second = await client.responses.create({ model: row.model, input: 'And of Italy?', previous_response_id: first.id });
    t.equal(second.previous_response_id, first.id);
    t.not(second.id, first.id, 'a new response id');
    const sent = row.upstream().last!;
    if (row.path === '/v1/messages') {
      t.match(sent.json.messages, [
        { role: 'user', content: QUESTION },
        { role: 'assistant', content: first.output_text },
        { role: 'user', content: 'And of Italy?' },
      ]);
      t.equal(sent.json.messages.length, 3);
    } else {
      // OpenAI never saw the gateway's ids: the earlier turn must travel in the input.
      t.ok(sent.body.includes(QUESTION), 'the earlier question reaches OpenAI');
      t.ok(sent.body.includes(JSON.stringify(first.output_text).slice(1, -1)), 'and the earlier answer');
      t.ok(sent.body.includes('And of Italy?'));
      t.not(sent.json.previous_response_id, first.id, 'not a previous_response_id OpenAI cannot know');
    }
  });

  t.test(`${row.name}: a function call continued by previous_response_id and only the function_call_output`, async (t) => {
    const client = gateway.client();
    const first = await client.responses.create({ model: row.model, input: 'What is the weather like?', tools: [weatherTool] });
    const call = first.output.find((item): item is ResponseFunctionToolCall => item.type === 'function_call');
    t.ok(call, 'the first answer is a function call');
    if (!call) return;
    const second = await client.responses.create({
      model: row.model,
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temperature":18}' }],
      tools: [weatherTool],
    });
    t.ok(second.output_text.length > 0, 'a text answer');
    const sent = row.upstream().last!;
    if (row.path === '/v1/messages') {
      const assistant = sent.json.messages.at(-2);
      t.match(
        assistant?.content?.find?.((block: { type: string }) => block.type === 'tool_use'),
        { id: call.call_id, name: 'get_weather' },
        'the stored call reaches Anthropic as the tool_use before the result',
      );
      t.match(sent.json.messages.at(-1), { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.call_id }] });
      t.match(sent.json.messages[0], { role: 'user', content: 'What is the weather like?' }, 'and the first question');
    } else {
      t.ok(sent.body.includes('What is the weather like?'), 'the first question reaches OpenAI');
      t.ok(sent.json.input.some((item: { type?: string; call_id?: string }) => item.type === 'function_call' && item.call_id === call.call_id), 'the stored call');
      t.match(sent.json.input.at(-1), { type: 'function_call_output', call_id: call.call_id });
    }
  });

  t.test(`${row.name}: instructions are not carried over by previous_response_id`, async (t) => {
    const client = gateway.client();
    const first = await client.responses.create({ model: row.model, input: QUESTION, instructions: 'Answer in French.' });
    await client.responses.create({ model: row.model, input: 'And of Italy?', previous_response_id: first.id });
    // OpenAI's reference for `instructions`: "the instructions from a previous response will not be carried over".
    t.notOk(row.upstream().last!.body.includes('Answer in French.'), 'the earlier instructions do not reach the upstream');
  });

  t.test(`${row.name}: a streamed response is stored and can be continued`, async (t) => {
    const client = gateway.client();
    const events = await collect(await client.responses.create({ model: row.model, input: QUESTION, stream: true }));
    const completed = events.at(-1);
    if (completed?.type !== 'response.completed') return t.fail(`the stream ended on ${completed?.type}`);
    const retrieved = await client.responses.retrieve(completed.response.id);
    t.equal(retrieved.status, 'completed');
    t.same(retrieved.output, completed.response.output, 'the stored output is the streamed one');
    await client.responses.create({ model: row.model, input: 'And of Italy?', previous_response_id: completed.response.id });
    t.ok(row.upstream().last!.body.includes(QUESTION), 'the streamed turn reaches the upstream');
  });

  t.test(`${row.name}: retrieve and delete a stored response; another key sees nothing`, async (t) => {
    const client = gateway.client();
    const other = gateway.client({ apiKey: OTHER_KEY });
    const created = await client.responses.create({ model: row.model, input: QUESTION });
    const calls = row.upstream().requests.length;
    const retrieved = await client.responses.retrieve(created.id);
    t.equal(checkResponse(retrieved), null);
    t.equal(retrieved.id, created.id);
    t.equal(retrieved.output_text, created.output_text);
    t.equal(retrieved.status, 'completed');
    t.equal(row.upstream().requests.length, calls, 'read from the gateway, not the upstream');

    const foreign = await other.responses.retrieve(created.id).catch((error: unknown) => error);
    t.ok(foreign instanceof OpenAI.NotFoundError, `another key gets 404 (got ${String(foreign)})`);
    const foreignDelete = await other.responses.delete(created.id).catch((error: unknown) => error);
    t.ok(foreignDelete instanceof OpenAI.NotFoundError, 'and cannot delete it');
    const foreignContinue = await other.responses.create({ model: row.model, input: 'more', previous_response_id: created.id }).catch((error: unknown) => error);
    t.ok(foreignContinue instanceof OpenAI.NotFoundError, `nor continue it (got ${String(foreignContinue)})`);
    t.equal((await client.responses.retrieve(created.id)).id, created.id, 'still there for its owner');

    const deleted = await call(gateway.url, `/responses/${created.id}`, { method: 'DELETE' });
    t.equal(deleted.status, 200);
    // OpenAI's documented answer (API reference, "Delete a model response"): object "response", not "response.deleted".
    t.same(deleted.json, { id: created.id, object: 'response', deleted: true });
    const gone = await client.responses.retrieve(created.id).catch((error: unknown) => error);
    t.ok(gone instanceof OpenAI.NotFoundError, 'deleted: 404');
    const again = await client.responses.delete(created.id).catch((error: unknown) => error);
    t.ok(again instanceof OpenAI.NotFoundError, 'a second delete: 404');
  });

  t.test(`${row.name}: store:false answers but keeps nothing`, async (t) => {
    const client = gateway.client();
    const response = await client.responses.create({ model: row.model, input: QUESTION, store: false });
    t.equal(response.output_text, row.text);
    t.equal((response as { store?: boolean }).store, false);
    const error = await client.responses.retrieve(response.id).catch((caught: unknown) => caught);
    t.ok(error instanceof OpenAI.NotFoundError, `retrieve: 404 (got ${String(error)})`);
  });

  t.test(`${row.name}: a built-in tool the gateway cannot run is a 400 naming it`, async (t) => {
    const calls = row.upstream().requests.length;
    const builtIns = [
      { type: 'web_search' },
      { type: 'web_search_preview' },
      { type: 'file_search', vector_store_ids: ['vs_1'] },
      { type: 'computer_use_preview', display_width: 1024, display_height: 768, environment: 'browser' },
    ];
    for (const builtIn of builtIns) {
      const error = await gateway
        .client()
        .responses.create({ model: row.model, input: QUESTION, tools: [weatherTool, builtIn as never] })
        .catch((caught: unknown) => caught);
      t.ok(error instanceof OpenAI.BadRequestError, `${builtIn.type}: BadRequestError (got ${String(error)})`);
      t.match((error as Error).message, builtIn.type, `${builtIn.type}: the message names the tool`);
    }
    t.equal(row.upstream().requests.length, calls, 'the upstream is not called');
  });

  t.test(`${row.name}: another key of the same tenant cannot read a key's stored response`, async (t) => {
    const created = await gateway.client({ apiKey: SIBLING_A }).responses.create({ model: row.model, input: QUESTION });
    t.equal((await gateway.client({ apiKey: SIBLING_A }).responses.retrieve(created.id)).id, created.id);
    const error = await gateway.client({ apiKey: SIBLING_B }).responses.retrieve(created.id).catch((caught: unknown) => caught);
    t.ok(error instanceof OpenAI.NotFoundError, `404 (got ${String(error)})`);
  });
}

t.test('an input_image part reaches Anthropic as an image block', async (t) => {
  const pixel = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
  const response = await gateway.client().responses.create({
    model: 'claude-sonnet-4-5',
    input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', image_url: `data:image/png;base64,${pixel}`, detail: 'auto' }] }],
  });
  t.equal(response.output_text, 'The capital of France is Paris.');
  t.match(anthropicUpstream.last!.json.messages, [
    { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: pixel } }] },
  ]);
});

t.test("OpenAI's 429 on /v1/responses reaches the SDK as a RateLimitError", async (t) => {
  openaiUpstream.next(json(429, fixtureJson('openai-responses/error-429-insufficient-quota.json')));
  const error = await gateway.client().responses.create({ model: 'gpt-4o-mini', input: QUESTION }).catch((caught: unknown) => caught);
  t.ok(error instanceof OpenAI.APIError && error.status === 429, `a 429 (got ${String(error)})`);
});

t.test("an error event in OpenAI's stream ends the client's stream with an error, never a completed response", async (t) => {
  openaiUpstream.next(sse(fixture('openai-responses/stream-error.sse')));
  const seen: string[] = [];
  const failure = await (async () => {
    for await (const event of await gateway.client().responses.create({ model: 'gpt-4o-mini', input: QUESTION, stream: true })) seen.push(event.type);
  })().catch((caught: unknown) => caught);
  t.notOk(seen.includes('response.completed'), 'no response.completed');
  t.ok(failure instanceof OpenAI.APIError || seen.includes('response.failed'), `the SDK throws, or the stream says response.failed (events: ${seen.join(', ')}; error: ${String(failure)})`);
});

t.test('a forced function tool_choice reaches Anthropic as its tool choice', async (t) => {
  await gateway.client().responses.create({ model: 'claude-sonnet-4-5', input: 'Weather?', tools: [weatherTool], tool_choice: { type: 'function', name: 'get_weather' }, top_p: 0.5 });
  t.same(anthropicUpstream.last!.json.tool_choice, { type: 'tool', name: 'get_weather' });
  t.equal(anthropicUpstream.last!.json.top_p, 0.5);
});

t.test('an answer cut by the token limit is status incomplete (max_output_tokens), stream and not', async (t) => {
  const cut = { ...fixtureJson('anthropic/chat.json'), stop_reason: 'max_tokens' };
  anthropicUpstream.next(json(200, cut));
  const response = await gateway.client().responses.create({ model: 'claude-sonnet-4-5', input: QUESTION, max_output_tokens: 16 });
  t.equal(checkResponse(response), null);
  t.equal(response.status, 'incomplete');
  t.same(response.incomplete_details, { reason: 'max_output_tokens' });

  anthropicUpstream.next(sse(fixture('anthropic/stream.sse').replace('"stop_reason":"end_turn"', '"stop_reason":"max_tokens"')));
  const events = await collect(await gateway.client().responses.create({ model: 'claude-sonnet-4-5', input: QUESTION, max_output_tokens: 16, stream: true }));
  const last = events.at(-1);
  t.equal(last?.type, 'response.incomplete', 'the stream ends on response.incomplete');
  if (last?.type === 'response.incomplete') t.same(last.response.incomplete_details, { reason: 'max_output_tokens' });
  t.same(checkStreamEvents(events).problems, []);
});

for (const [provider, model, path] of [
  ['google', 'gemini-2.5-flash', /^\/v1beta\/models\/gemini-2\.5-flash:(generateContent|streamGenerateContent\?alt=sse)$/],
  ['cohere', 'command-a-03-2025', /^\/v2\/chat$/],
  ['mistral', 'mistral-small-latest', /^\/v1\/chat\/completions$/],
] as const) {
  t.test(`${provider} (${model}) through the Responses API: text and stream, schema-valid`, async (t) => {
    const upstream = others[provider];
    upstream.reset();
    const response = await gateway.client().responses.create({ model, input: QUESTION, instructions: 'Be concise.' });
    t.equal(checkResponse(response), null);
    t.equal(response.output_text, 'The capital of France is Paris.');
    t.ok(response.usage && response.usage.total_tokens > 0, 'usage');
    t.match(upstream.last?.url, path);
    const events = await collect(await gateway.client().responses.create({ model, input: QUESTION, stream: true }));
    t.same(collapsed(events.map((event) => event.type)), TEXT_ORDER);
    checkStream(t, events);
    const completed = events.at(-1);
    t.equal(completed?.type === 'response.completed' && completed.response.output_text === undefined && completed.response.output.length, 1);
    const text = events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : [])).join('');
    t.equal(text, 'The capital of France is Paris.');
    const called = await gateway.client().responses.create({ model, input: 'Weather?', tools: [weatherTool] });
    // These fixtures call a tool named `weather`.
    t.ok(called.output.some((item) => item.type === 'function_call' && item.name === 'weather'), 'a function call');
  });
}
