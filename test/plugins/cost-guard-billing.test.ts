// What the cost guard bills and records, through the gateway (embedded store): a stream cut short is
// billed for what was generated even when its provider reported a partial usage early (Anthropic's
// message_start says output_tokens: 1); a cache hit costs nothing but its tokens count in usage.
import t from 'tap';
import type OpenAI from 'openai';
import { startGateway, call, PROTOCOL_ONLY, type TestGateway } from '../helpers/gateway.js';
import { PROVIDER_KEYS, startFakeOpenAI } from '../helpers/fakes.js';
import { chatRequest, FIXTURE_COST, near, testCatalog } from '../helpers/money.js';
import { FakeProvider, sleep, sse } from '../helpers/fake-provider.js';
import { estimateTextTokens } from '../../core/tokens.js';
import { costOf } from '../../core/catalog.js';

type Tap = { teardown(fn: () => unknown): void };

const usage = async (gateway: TestGateway) => (await call(gateway.url, '/usage')).json;

async function settled(gateway: TestGateway, requests: number) {
  for (let i = 0; i < 200 && (await usage(gateway)).budgets.day.requests < requests; i++) await sleep(20);
  return (await usage(gateway)).budgets.day;
}

/** An Anthropic stream whose message_start reports 19 prompt tokens and 1 output token, then `pieces` text deltas. */
function anthropicStream(pieces: number): { transcript: string; text: string; piece: (i: number) => string } {
  const piece = (i: number) => ` word${i} is here.`;
  let text = '';
  let transcript =
    'event: message_start\ndata: {"type":"message_start","message":{"model":"claude-sonnet-4-5-20250929","id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":19,"output_tokens":1}}}\n\n' +
    'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n';
  for (let i = 0; i < pieces; i++) {
    text += piece(i);
    transcript += `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${piece(i)}"}}\n\n`;
  }
  transcript +=
    'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n' +
    `event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":${estimateTextTokens(text)}}}\n\n` +
    'event: message_stop\ndata: {"type":"message_stop"}\n\n';
  return { transcript, text, piece };
}

async function anthropicGateway(t: Tap, upstream: FakeProvider): Promise<TestGateway> {
  const gateway = await startGateway({ ...PROTOCOL_ONLY, ANTHROPIC_API_KEY: PROVIDER_KEYS.anthropic, ANTHROPIC_BASE_URL: upstream.url });
  t.teardown(() => gateway.close());
  return gateway;
}

const claude = { model: 'anthropic/claude-sonnet-4-5', stream: true, messages: [{ role: 'user', content: 'Count for me.' }] };

t.test('a client that leaves an Anthropic stream mid-way is billed for the text generated, not the 1 token message_start reported', async (t) => {
  const { transcript } = anthropicStream(400);
  // Paced, so the client leaves long before the end (400 deltas, 5 ms apart).
  const upstream = await FakeProvider.start(sse(transcript, { delayMs: 5 }));
  t.teardown(() => upstream.close());
  const gateway = await anthropicGateway(t, upstream);
  const controller = new AbortController();
  const stream = await gateway.client().chat.completions.create(claude as unknown as OpenAI.ChatCompletionCreateParamsStreaming, { signal: controller.signal });
  let received = '';
  let deltas = 0;
  try {
    for await (const chunk of stream) {
      const content = chunk.choices[0]?.delta.content;
      if (!content) continue;
      received += content;
      if (++deltas === 100) controller.abort();
    }
  } catch {
    // the SDK ends the loop or throws APIUserAbortError
  }
  t.equal(deltas, 100, 'the client left after 100 deltas');
  const day = await settled(gateway, 1);
  t.equal(day.requests, 1);
  t.equal(day.prompt_tokens, 19, 'the prompt as reported');
  t.ok(day.completion_tokens >= estimateTextTokens(received), `${day.completion_tokens} completion tokens billed ≥ the ${estimateTextTokens(received)} the client received`);
  const model = gateway.app.deps.catalog.get('anthropic', 'claude-sonnet-4-5')!;
  const expected = costOf(model, { prompt_tokens: 19, completion_tokens: day.completion_tokens, total_tokens: 19 + day.completion_tokens })!;
  t.ok(Math.abs(day.spent_usd - expected) < 1e-8, `billed $${day.spent_usd} for 19 + ${day.completion_tokens} tokens ($${expected})`);
  t.equal(day.cost_usd, day.spent_usd, 'the usage rollup has the same cost');
});

t.test('an Anthropic stream the provider breaks mid-way is billed for the text generated', async (t) => {
  const { transcript, text: whole, piece } = anthropicStream(300);
  // message_start, content_block_start and 300 deltas, then the connection drops.
  const upstream = await FakeProvider.start(sse(transcript, { stopAfter: 302, cut: true, delayMs: 1 }));
  t.teardown(() => upstream.close());
  const gateway = await anthropicGateway(t, upstream);
  const response = await call(gateway.url, '/chat/completions', { body: JSON.stringify(claude) });
  t.match(response.text, /upstream_connection_error/, 'the stream ended with an error event');
  t.ok(response.text.includes(piece(299)), 'after every delta');
  const day = await settled(gateway, 1);
  t.equal(day.prompt_tokens, 19);
  t.equal(day.completion_tokens, estimateTextTokens(whole), 'every generated token is billed');
});

t.test('a cache hit costs nothing, and usage counts its request, its tokens, the hit and what it saved', async (t) => {
  const upstream = await startFakeOpenAI();
  t.teardown(() => upstream.close());
  const gateway = await startGateway({
    ...PROTOCOL_ONLY,
    MODELGATE_CACHE_ENABLED: 'true',
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_MODEL_CATALOG: testCatalog(),
  });
  t.teardown(() => gateway.close());
  const body = JSON.stringify(chatRequest(64));
  t.equal((await call(gateway.url, '/chat/completions', { body })).headers.get('x-modelgate-cache'), 'MISS');
  t.equal((await call(gateway.url, '/chat/completions', { body })).headers.get('x-modelgate-cache'), 'HIT');
  t.equal(upstream.requests.length, 1);
  const day = await settled(gateway, 2);
  t.equal(day.requests, 2);
  t.equal(day.cache_hits, 1);
  t.equal(day.prompt_tokens, 2 * 24, "both requests' prompt tokens (24 each, as the fixture reports)");
  t.equal(day.completion_tokens, 2 * 8, "both requests' completion tokens");
  t.ok(near(day.spent_usd, FIXTURE_COST), `only the first was billed: $${day.spent_usd}`);
  t.ok(near(day.cost_usd, FIXTURE_COST));
  t.ok(near(day.saved_usd, FIXTURE_COST), `the hit saved what the first cost: $${day.saved_usd}`);
});
