// Golden tests of the custom adapter against what OpenAI-compatible servers send differently from
// OpenAI (providers.md §0): extra finish reasons, tool calls without index or type, usage on the
// finish chunk. Mistral's recorded answers are the Mistral-style case; every answer must come back
// valid under OpenAI's chat schema, with the fields OpenAI knows passed through.
import t from 'tap';
import { custom } from '../../providers/custom/index.js';
import { loadCatalog } from '../../core/catalog.js';
import type { ChatChunk } from '../../core/chat-types.js';
import type { UpstreamError } from '../../core/upstream-error.js';
import type { TranslateContext } from '../../core/provider.js';
import { fixture, fixtureJson } from '../helpers/fake-provider.js';
import { checkChunk, checkCompletion } from '../helpers/schema.js';
import { replay, replayUntilError, streamedText } from '../helpers/replay.js';
import { rejection } from '../helpers/rejection.js';

const provider = custom.create({ CUSTOM_BASE_URL: 'http://localhost:8000/v1', CUSTOM_MODELS: [] });
const base = loadCatalog().get('openai', 'gpt-4o-mini')!;
const context = (stream = false): TranslateContext => ({ model: { ...base, provider: 'custom', id: 'llama3', native_id: 'llama3' }, stream, requestId: 'req-1' });

/** One data-only chunk of a compatible server, choice 0. */
function chunk(delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}): string {
  return `data: ${JSON.stringify({ id: 'cmpl-1', object: 'chat.completion.chunk', created: 1, model: 'llama3', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
}

const toolCalls = (chunks: ChatChunk[]) => chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);

t.test('a Mistral-style tool call answer gets type "function" and stays schema-valid', async (t) => {
  const completion = provider.chatResponse(fixtureJson('mistral/chat-tool-call.json'), context());
  t.equal(checkCompletion(completion), null);
  t.strictSame(completion.choices[0]!.message.tool_calls, [{ id: 'gSIMJiOkT', function: { name: 'weather', arguments: '{"location": "San Francisco"}' }, type: 'function' }]);
  t.equal(completion.choices[0]!.finish_reason, 'tool_calls');
});

t.test('non-stream finish reasons: model_length is length, anything unknown stop, error a failed attempt', async (t) => {
  const body = fixtureJson('mistral/chat.json');
  const finishing = (finish: unknown) => provider.chatResponse({ ...body, choices: [{ ...body.choices[0], finish_reason: finish }] }, context());
  t.equal(finishing('model_length').choices[0]!.finish_reason, 'length');
  t.equal(finishing('eos_token').choices[0]!.finish_reason, 'stop');
  t.equal(finishing(null).choices[0]!.finish_reason, 'stop');
  t.equal(finishing('content_filter').choices[0]!.finish_reason, 'content_filter', "OpenAI's own reasons pass");
  const lengthy = finishing('model_length');
  t.equal(checkCompletion(lengthy), null);
  t.notOk('tool_calls' in lengthy.choices[0]!.message, 'tool_calls: null is not passed on');
  const error = rejection(() => finishing('error')) as UpstreamError;
  t.match(error, { provider: 'custom', reason: 'bad_response', retryable: true, status: 502, message: /stopped generating \(finish_reason error\)/ });
});

t.test('other fields of an answer pass through: logprobs, system_fingerprint, extra message fields', async (t) => {
  const logprobs = { content: [{ token: 'Paris', logprob: -0.01, bytes: [80, 97, 114, 105, 115], top_logprobs: [] }], refusal: null };
  const body = { ...fixtureJson('openai/chat.json'), system_fingerprint: 'fp_local' };
  body.choices[0].logprobs = logprobs;
  body.choices[0].message.reasoning_content = 'thinking';
  const completion = provider.chatResponse(body, context());
  t.equal(checkCompletion(completion), null);
  t.strictSame(completion.choices[0]!.logprobs, logprobs);
  t.equal(completion.system_fingerprint, 'fp_local');
  t.equal(completion.choices[0]!.message.reasoning_content, 'thinking');
});

t.test("a Mistral-style stream: usage moves off the finish chunk into OpenAI's last, choice-less chunk", async (t) => {
  const translator = provider.streamTranslator(context(true));
  const chunks = replay(translator, fixture('mistral/stream.sse'));
  for (const c of chunks) t.equal(checkChunk(c), null);
  t.equal(streamedText(chunks), 'The capital of France is Paris.');
  const finish = chunks.at(-2)!;
  t.equal(finish.choices[0]!.finish_reason, 'stop');
  t.notOk('usage' in finish, 'no usage on the finish chunk');
  t.strictSame(chunks.at(-1), { id: '5319bd0299614c679a0068a4f2c8ffd0', object: 'chat.completion.chunk', created: 1769088720, model: 'mistral-small-latest', choices: [], usage: { prompt_tokens: 13, total_tokens: 21, completion_tokens: 8 } });
  t.equal(translator.finished, true);
  t.equal(translator.usage?.total_tokens, 21);
});

t.test('a stream cut after its finish chunk, without [DONE], still ends with the usage chunk', async (t) => {
  const translator = provider.streamTranslator(context(true));
  const chunks = replay(translator, fixture('mistral/stream.sse').replace('data: [DONE]\n\n', ''));
  t.equal(translator.finished, true);
  t.strictSame(chunks.at(-1)!.choices, []);
  t.equal(chunks.filter((c) => c.usage).length, 1, 'usage is sent once');
});

t.test('usage on the finish chunk and then the usage chunk as well: sent once, last', async (t) => {
  const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
  const transcript = chunk({ role: 'assistant', content: 'Hi' }) + chunk({}, 'stop', { usage }) + `data: ${JSON.stringify({ id: 'cmpl-1', object: 'chat.completion.chunk', created: 1, model: 'llama3', choices: [], usage })}\n\n` + 'data: [DONE]\n\n';
  const chunks = replay(provider.streamTranslator(context(true)), transcript);
  t.strictSame(
    chunks.map((c) => [c.choices.length, c.usage ?? null]),
    [
      [1, null],
      [1, null],
      [0, usage],
    ],
  );
});

t.test('a Mistral-style streamed tool call gets index 0 and type "function"', async (t) => {
  const chunks = replay(provider.streamTranslator(context(true)), fixture('mistral/stream-tool-call.sse'));
  for (const c of chunks) t.equal(checkChunk(c), null);
  t.strictSame(toolCalls(chunks), [{ index: 0, id: 'gSIMJiOkT', type: 'function', function: { name: 'weather', arguments: '{"location": "San Francisco"}' } }]);
  t.equal(chunks.find((c) => c.choices[0]?.finish_reason)!.choices[0]!.finish_reason, 'tool_calls');
});

t.test('streamed calls are told apart by id, and fragments without an id follow their upstream index', async (t) => {
  const transcript =
    chunk({ tool_calls: [{ id: 'a', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] }) +
    // a server that numbers every call 0: the new id is a new call, and index-only fragments follow it
    chunk({ tool_calls: [{ index: 0, id: 'b', function: { name: 'weather', arguments: '{"city":' } }] }) +
    chunk({ tool_calls: [{ index: 0, function: { arguments: '"Rome"}' } }] }) +
    chunk({ tool_calls: [{ id: 'a', function: { name: 'weather', arguments: '' } }] }, 'tool_calls') +
    'data: [DONE]\n\n';
  const chunks = replay(provider.streamTranslator(context(true)), transcript);
  for (const c of chunks) t.equal(checkChunk(c), null);
  t.strictSame(
    toolCalls(chunks).map((call) => [call.index, call.id, call.type, call.function?.arguments]),
    [
      [0, 'a', 'function', '{"city":"Paris"}'],
      [1, 'b', 'function', '{"city":'],
      [1, undefined, undefined, '"Rome"}'],
      [0, undefined, undefined, ''],
    ],
  );
});

t.test('a streamed call that starts without an id or name is a bad response', async (t) => {
  const { error } = replayUntilError(provider.streamTranslator(context(true)), chunk({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }));
  t.match(error, { reason: 'bad_response', retryable: true });
});

t.test('stream finish reasons: model_length is length, anything unknown stop, error a failed attempt', async (t) => {
  const finishing = (finish: string) => replay(provider.streamTranslator(context(true)), chunk({ content: 'Hi' }) + chunk({}, finish) + 'data: [DONE]\n\n');
  for (const [upstream, expected] of [['model_length', 'length'], ['eos_token', 'stop'], ['length', 'length']] as const) {
    const chunks = finishing(upstream);
    for (const c of chunks) t.equal(checkChunk(c), null);
    t.equal(chunks.at(-1)!.choices[0]!.finish_reason, expected, upstream);
  }
  const { chunks, error } = replayUntilError(provider.streamTranslator(context(true)), chunk({ content: 'Hi' }) + chunk({}, 'error'));
  t.equal(streamedText(chunks), 'Hi');
  t.match(error, { provider: 'custom', reason: 'stream_error', retryable: true, status: 502, code: 'upstream_generation_error' });
});

t.test('a custom server that refuses the key names the setting to check', async (t) => {
  t.match(provider.error(401, {}, '{"detail":"Unauthorized"}'), { status: 502, retryable: false, code: 'provider_auth_error', message: "The custom provider rejected the gateway's credentials (HTTP 401); check CUSTOM_API_KEY" });
});
