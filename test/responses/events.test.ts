// Chat chunks written as the Responses API's events: the order OpenAI sends them in, numbered from
// 0, items closed before the final response, which holds the whole output and the usage.
import t from 'tap';
import { ResponseEventWriter } from '../../core/responses/events.js';
import type { ResponseObject } from '../../core/responses/types.js';
import type { ChatChunk, Usage } from '../../core/chat-types.js';
import type { SseWriter } from '../../core/sse.js';

interface Written {
  name: string;
  payload: Record<string, any>;
}

function writer() {
  const events: Written[] = [];
  let closed = false;
  const sse = {
    start() {},
    sendEvent(name: string, payload: Record<string, any>) {
      events.push({ name, payload });
    },
    close() {
      closed = true;
    },
  } as unknown as SseWriter;
  return { sse, events, closed: () => closed };
}

let usage: Usage | undefined;
const reported: Usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 4 } };
const chunk = (delta: ChatChunk['choices'][number]['delta'], finish: ChatChunk['choices'][number]['finish_reason'] = null): ChatChunk => ({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

async function run(chunks: ChatChunk[], end: 'done' | 'error' = 'done', withUsage = true) {
  usage = withUsage ? reported : undefined;
  const out = writer();
  const settled: ResponseObject[] = [];
  const events = new ResponseEventWriter(out.sse, () => ({ id: 'resp_x', createdAt: 1, model: 'claude', request: { model: 'auto', input: 'q', metadata: { a: 'b' } } }), () => usage, (r) => {
    settled.push(r);
  });
  events.start(200, {});
  for (const c of chunks) events.send(c);
  if (end === 'done') await events.done();
  else {
    events.error({ error: { message: 'overloaded', type: 'server_error', param: null, code: 'upstream_stream_error' } });
    events.close();
  }
  return { events: out.events, settled, closed: out.closed() };
}

t.test('text: created, in_progress, item and part opened, deltas, then everything closed and completed with usage', async (t) => {
  const { events, settled, closed } = await run([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hel' }), chunk({ content: 'lo' }), chunk({}, 'stop')]);
  t.same(
    events.map((e) => e.name),
    [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ],
  );
  t.same(events.map((e) => e.payload.sequence_number), [...events.keys()], 'numbered 0..n');
  t.ok(events.every((e) => e.payload.type === e.name), 'event name = payload type');
  t.equal(events[0]!.payload.response.status, 'in_progress');
  t.equal(events[0]!.payload.response.usage, null);
  t.same(events[0]!.payload.response.metadata, { a: 'b' });
  t.equal(events[6]!.payload.text, 'Hello');
  const done = events.at(-1)!.payload.response as ResponseObject;
  t.equal(done.status, 'completed');
  t.equal(done.model, 'claude');
  t.same(done.output, [{ id: events[2]!.payload.item.id, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello', annotations: [], logprobs: [] }] }]);
  t.same(done.usage, { input_tokens: 10, input_tokens_details: { cached_tokens: 4, cache_write_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 });
  t.same(settled, [done], 'settled once with the final response');
  t.ok(closed, 'the stream ends without [DONE]');
  t.match(events[2]!.payload.item.id, /^msg_[0-9a-f]{32}$/);
});

t.test('tool calls: one function_call item each, arguments streamed and closed with their name', async (t) => {
  const { events } = await run([
    chunk({ content: 'Let me check.' }),
    chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'weather', arguments: '' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
    chunk({ tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'time', arguments: '{}' } }] }),
    chunk({}, 'tool_calls'),
  ]);
  const names = events.map((e) => e.name);
  t.same(names.filter((n) => n === 'response.output_item.added').length, 3);
  const args = events.filter((e) => e.name === 'response.function_call_arguments.done').map((e) => [e.payload.name, e.payload.arguments, e.payload.output_index]);
  t.same(args, [
    ['weather', '{"city":"Paris"}', 1],
    ['time', '{}', 2],
  ]);
  const deltas = events.filter((e) => e.name === 'response.function_call_arguments.delta' && e.payload.output_index === 1).map((e) => e.payload.delta);
  t.same(deltas, ['{"city":', '"Paris"}']);
  const done = events.at(-1)!.payload.response as ResponseObject;
  t.same(
    done.output.map((item) => item.type),
    ['message', 'function_call', 'function_call'],
  );
  t.match(done.output[1], { type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}', status: 'completed' });
  // Each item is closed before the next is added, as OpenAI sends them.
  t.same(
    names.filter((n) => n === 'response.output_item.added' || n === 'response.output_item.done'),
    ['response.output_item.added', 'response.output_item.done', 'response.output_item.added', 'response.output_item.done', 'response.output_item.added', 'response.output_item.done'],
  );
});

t.test('without reported usage the completed response still has a usage object (zeros): clients require one', async (t) => {
  const { events } = await run([chunk({ content: 'x' }), chunk({}, 'stop')], 'done', false);
  t.same(events.at(-1)!.payload.response.usage, { input_tokens: 0, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: 0, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 0 });
});

t.test('a refusal is a refusal part; a length finish makes the response incomplete', async (t) => {
  const refusal = await run([chunk({ refusal: "I can't" }), chunk({}, 'stop')]);
  t.ok(refusal.events.some((e) => e.name === 'response.refusal.delta'));
  t.same((refusal.events.at(-1)!.payload.response as ResponseObject).output[0], {
    id: refusal.events[2]!.payload.item.id,
    type: 'message',
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'refusal', refusal: "I can't" }],
  });
  const cut = await run([chunk({ content: 'Once upon' }), chunk({}, 'length')]);
  const last = cut.events.at(-1)!;
  t.equal(last.name, 'response.incomplete');
  t.equal(last.payload.response.status, 'incomplete');
  t.same(last.payload.response.incomplete_details, { reason: 'max_output_tokens' });
  t.equal(last.payload.response.output[0].status, 'incomplete');
});

t.test('a failure after the first event: an error event then response.failed, nothing stored', async (t) => {
  const { events, settled, closed } = await run([chunk({ content: 'Hel' })], 'error');
  t.same(events.slice(-2).map((e) => e.name), ['error', 'response.failed']);
  t.match(events.at(-2)!.payload, { code: 'upstream_stream_error', message: 'overloaded', param: null, error: { type: 'server_error', code: 'upstream_stream_error', message: 'overloaded' } });
  t.match(events.at(-1)!.payload.response, { status: 'failed', error: { code: 'server_error', message: 'overloaded' } });
  t.same(events.at(-1)!.payload.response.output[0].content, [{ type: 'output_text', text: 'Hel', annotations: [], logprobs: [] }], 'what the client received');
  t.same(settled, []);
  t.ok(closed);
});
