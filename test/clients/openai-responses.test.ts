// The OpenAI SDK's Responses API (client.responses) against the gateway, two ways: a gpt model, which
// the gateway sends on to OpenAI's own /v1/responses (a fake replaying recorded answers), and a
// claude model, which it translates to Anthropic's Messages API and back; then Gemini, Cohere and
// Mistral. Every answer and every stream event is checked against the published Responses schema;
// what each upstream received is checked too. Stored responses: openai-responses-store.test.ts.
import t from 'tap';
import OpenAI from 'openai';
import type { ResponseFunctionToolCall, ResponseInputItem } from 'openai/resources/responses/responses';
import { call } from '../helpers/gateway.js';
import { PROVIDER_KEYS } from '../helpers/fakes.js';
import { fixture, fixtureJson, json, sse } from '../helpers/fake-provider.js';
import { checkResponse, checkStreamEvents, type Known } from '../helpers/responses-schema.js';
import { useResponsesGateway, gateway, openaiUpstream, anthropicUpstream, others, rows, QUESTION, weatherTool, TEXT_ORDER, collapsed, collect, checkStream } from '../helpers/responses-clients.js';

useResponsesGateway();

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
