// The Responses request read into the chat request every adapter knows: each mapping, and each
// refusal (a 400 naming the field in the Responses API's own terms).
import t from 'tap';
import { readResponsesRequest, resolveReferences, toChatRequest } from '../../core/responses/request.js';
import type { InputItem } from '../../core/responses/types.js';
import { isGatewayError } from '../../core/errors.js';

const chatOf = (body: Record<string, unknown>, history: InputItem[] = []) => toChatRequest(readResponsesRequest({ model: 'm', ...body }), history);

function refused(t: any, body: unknown, param: string, pattern: RegExp, status = 400) {
  try {
    const request = readResponsesRequest(body);
    toChatRequest(request, []);
  } catch (error) {
    t.ok(isGatewayError(error), 'a gateway error');
    if (!isGatewayError(error)) return;
    t.equal(error.status, status, `status for ${param}`);
    t.equal(error.param, param);
    t.match(error.message, pattern);
    return;
  }
  t.fail(`accepted: ${JSON.stringify(body)}`);
}

t.test('input text and instructions become a system and a user message; sampling and limits carry over', async (t) => {
  const chat = chatOf({ input: 'Hello', instructions: 'Be brief', temperature: 0.3, top_p: 0.9, max_output_tokens: 50, user: 'u1', stream: true, parallel_tool_calls: false });
  t.same(chat.messages, [
    { role: 'system', content: 'Be brief' },
    { role: 'user', content: 'Hello' },
  ]);
  t.equal(chat.temperature, 0.3);
  t.equal(chat.top_p, 0.9);
  t.equal(chat.max_completion_tokens, 50);
  t.equal(chat.user, 'u1');
  t.equal(chat.stream, true);
  t.equal(chat.parallel_tool_calls, false);
  t.equal(chatOf({ input: 'x', safety_identifier: 'hashed-user' }).user, 'hashed-user');
});

t.test('message items: parts map to chat parts, roles are kept, reasoning items are dropped', async (t) => {
  const chat = chatOf({
    input: [
      { role: 'developer', content: [{ type: 'input_text', text: 'Rules' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is in ' }, { type: 'input_image', image_url: 'https://x/cat.png', detail: 'low' }] },
      { type: 'reasoning', id: 'rs_1', summary: [] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'A cat.', annotations: [] }] },
      { role: 'user', content: [{ type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,AAAA' }] },
    ],
  });
  t.same(chat.messages, [
    { role: 'developer', content: 'Rules' },
    { role: 'user', content: [{ type: 'text', text: 'What is in ' }, { type: 'image_url', image_url: { url: 'https://x/cat.png', detail: 'low' } }] },
    { role: 'assistant', content: 'A cat.' },
    { role: 'user', content: [{ type: 'file', file: { file_data: 'data:application/pdf;base64,AAAA', filename: 'a.pdf' } }] },
  ]);
});

t.test('function calls join the assistant turn before them, their outputs become tool messages', async (t) => {
  const chat = chatOf({
    input: [
      { role: 'user', content: 'Weather in Paris and Rome?' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
      { type: 'function_call', call_id: 'c1', name: 'weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call', call_id: 'c2', name: 'weather', arguments: '{"city":"Rome"}' },
      { type: 'function_call_output', call_id: 'c1', output: '18C' },
      { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: '21C' }] },
    ],
    tools: [{ type: 'function', name: 'weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true }],
    tool_choice: { type: 'function', name: 'weather' },
  });
  t.same(chat.messages.slice(1), [
    {
      role: 'assistant',
      content: 'Checking.',
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
        { id: 'c2', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: '18C' },
    { role: 'tool', tool_call_id: 'c2', content: '21C' },
  ]);
  t.same(chat.tools, [{ type: 'function', function: { name: 'weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true } }]);
  t.same(chat.tool_choice, { type: 'function', function: { name: 'weather' } });
  // A call with no assistant text before it opens an assistant turn of its own.
  const bare = chatOf({ input: [{ role: 'user', content: 'q' }, { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: 'c', output: 'r' }] });
  t.same(bare.messages[1], { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] });
});

t.test('text.format becomes response_format', async (t) => {
  const schema = { type: 'object', properties: { v: { type: 'string' } }, required: ['v'] };
  t.same(chatOf({ input: 'x', text: { format: { type: 'json_schema', name: 'r', schema, strict: true, description: 'd' } } }).response_format, {
    type: 'json_schema',
    json_schema: { name: 'r', schema, strict: true, description: 'd' },
  });
  t.same(chatOf({ input: 'x', text: { format: { type: 'json_object' } } }).response_format, { type: 'json_object' });
  t.same(chatOf({ input: 'x', text: { format: { type: 'text' } } }).response_format, { type: 'text' });
});

t.test('the stored turns of previous_response_id come before the input; instructions are not carried over', async (t) => {
  const history: InputItem[] = [
    { role: 'user', content: 'Capital of France?' },
    { id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Paris.' }] },
  ];
  const chat = chatOf({ input: 'And Germany?', instructions: 'Now terse', previous_response_id: `resp_${'a'.repeat(32)}` }, history);
  t.same(chat.messages, [
    { role: 'system', content: 'Now terse' },
    { role: 'user', content: 'Capital of France?' },
    { role: 'assistant', content: 'Paris.' },
    { role: 'user', content: 'And Germany?' },
  ]);
});

t.test('what nothing behind the gateway can do is refused with 400, naming the field', async (t) => {
  for (const type of ['web_search', 'web_search_preview', 'file_search', 'computer_use_preview', 'code_interpreter', 'mcp', 'image_generation']) {
    refused(t, { model: 'm', input: 'x', tools: [{ type: 'function', name: 'ok' }, { type }] }, 'tools[1].type', new RegExp(`built-in tool '${type}'`));
  }
  refused(t, { model: 'm', input: [{ type: 'item_reference' }] }, 'input[0].id', /string/);
  refused(t, { model: 'm', input: [{ type: 'custom_tool_call', id: 'x' }] }, 'input[0].type', /custom_tool_call/);
  refused(t, { model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1' }] }] }, 'input[0].content[0].image_url', /file_id/);
  refused(t, { model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-1' }] }] }, 'input[0].content[0].file_data', /file_id/);
  // A file the provider fetches is billed at a size the gateway cannot see: the reservation would undercount.
  refused(t, { model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://x/500-pages.pdf' }] }] }, 'input[0].content[0].file_data', /file_url/);
  // Chat tool results are text: an image there would be dropped unseen.
  refused(t, { model: 'm', input: [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_image', image_url: 'https://x' }] }] }, 'input[0].output[0].type', /function call's output/);
  refused(t, { model: 'm', input: [{ role: 'system', content: [{ type: 'input_image', image_url: 'https://x' }] }] }, 'input[0].content[0].type', /system message/);
  refused(t, { model: 'm', input: [{ role: 'robot', content: 'x' }] }, 'input[0].role', /one of/);
  refused(t, { model: 'm', input: [{ type: 'function_call', call_id: 'c', arguments: '{}' }] }, 'input[0].name', /string/);
  refused(t, { model: 'm', input: [{ type: 'function_call_output', output: 'x' }] }, 'input[0].call_id', /string/);
  refused(t, { model: 'm', input: 'x', background: true }, 'background', /background/);
  refused(t, { model: 'm', input: 'x', conversation: 'conv_1' }, 'conversation', /previous_response_id/);
  refused(t, { model: 'm', input: 'x', prompt: { id: 'pmpt_1' } }, 'prompt', /prompt/);
  refused(t, { model: 'm', input: 'x', service_tier: 'priority' }, 'service_tier', /billed/);
  refused(t, { model: 'm' }, 'input', /required/);
  refused(t, { model: 'm', input: 7 }, 'input', /string or a list/);
  refused(t, { model: '', input: 'x' }, 'model', /non-empty/);
  refused(t, { model: 'm', input: 'x', temperature: 3 }, 'temperature', /from 0 to 2/);
  refused(t, { model: 'm', input: 'x', max_output_tokens: 1.5 }, 'max_output_tokens', /integer/);
  refused(t, { model: 'm', input: 'x', tool_choice: { type: 'file_search' } }, 'tool_choice', /function/);
  refused(t, { model: 'm', input: 'x', text: { format: { type: 'json_schema', name: 'r' } } }, 'text.format.schema', /JSON Schema/);
  refused(t, { model: 'm', input: 'x', tools: [{ type: 'function', name: 'has space' }] }, 'tools[0].name', /letters/);
  refused(t, { model: 'm', input: 'x', previous_response_id: 'resp_../../etc' }, 'previous_response_id', /not found/, 404);
});

t.test('item references: at most 1000, each resolved, the bytes they stand for returned for the size limit', async (t) => {
  const id = `fc_${'a'.repeat(32)}`;
  const item: InputItem = { type: 'function_call', call_id: 'c', name: 'f', arguments: 'x'.repeat(1000) };
  const request = readResponsesRequest({ model: 'm', input: [{ role: 'user', content: 'q' }, { type: 'item_reference', id }, { type: 'item_reference', id }] });
  const asked: string[][] = [];
  const bytes = await resolveReferences(request, async (ids) => {
    asked.push(ids);
    return new Map([[id, item]]);
  });
  t.same(asked, [[id]], 'each id looked up once');
  t.equal(bytes, 2 * Buffer.byteLength(JSON.stringify(item)));
  t.same((request.input as InputItem[]).slice(1), [item, item]);
  const many = readResponsesRequest({ model: 'm', input: Array.from({ length: 1001 }, () => ({ type: 'item_reference', id })) });
  await t.rejects(resolveReferences(many, async () => new Map()), { status: 400, param: 'input' } as never);
  const explicitOff = readResponsesRequest({ model: 'm', input: 'x', background: false, conversation: null });
  t.notOk('background' in explicitOff || 'conversation' in explicitOff, 'an explicit off is not passed on');
});

t.test('metadata is held to OpenAI bounds: 16 pairs, keys of 64 and values of 512 characters', async (t) => {
  const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
  refused(t, { model: 'm', input: 'x', metadata: many }, 'metadata', /16 pairs/);
  refused(t, { model: 'm', input: 'x', metadata: { ['k'.repeat(65)]: 'v' } }, 'metadata', /64/);
  refused(t, { model: 'm', input: 'x', metadata: { k: 'v'.repeat(513) } }, 'metadata.k', /512/);
  refused(t, { model: 'm', input: 'x', metadata: { k: 1 } }, 'metadata.k', /strings/);
  t.ok(readResponsesRequest({ model: 'm', input: 'x', metadata: Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v'.repeat(512)])) }));
});
