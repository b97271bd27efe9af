// The budget holds against prompts the estimate could once undercount: 90 KB of mixed whitespace,
// which OpenAI's o200k encoding counts as ~45,000 tokens. The fake upstream reports usage as o200k
// counts it, so each admitted request is billed what a real provider would bill.
import t from 'tap';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { startGateway, call, PROTOCOL_ONLY, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, openAIResponder, PROVIDER_KEYS } from '../helpers/fakes.js';
import { json, fixtureJson, sleep, type FakeProvider, type RecordedRequest } from '../helpers/fake-provider.js';
import { PRICE, testCatalog } from '../helpers/money.js';
import { estimatePromptTokens } from '../../core/tokens.js';
import type { ChatRequest } from '../../core/chat-types.js';

const ATTACK = '\n\t \t\n '.repeat(15_000);
const request: ChatRequest = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: ATTACK }], max_tokens: 1 };

// o200k on adversarial whitespace costs ~10 µs a character: count each distinct prompt once.
const counted = new Map<string, number>();
function o200kPromptTokens(body: ChatRequest): number {
  let tokens = 3; // reply priming, as OpenAI counts
  for (const message of body.messages) {
    const text = typeof message.content === 'string' ? message.content : '';
    if (!counted.has(text)) counted.set(text, countTokens(text));
    tokens += 3 + counted.get(text)!;
  }
  return tokens;
}

let upstream: FakeProvider;
const catalog = testCatalog();
t.before(async () => {
  upstream = await startFakeOpenAI();
});
t.teardown(() => upstream.close());
t.beforeEach(() => upstream.reset());

/** Answers held until `release`, each reporting the prompt as o200k counts it and one output token. */
function billedLikeOpenAI(t: { teardown(fn: () => unknown): void }): { release: () => void } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  upstream.fallback = async (recorded: RecordedRequest, res) => {
    await released;
    const prompt = o200kPromptTokens(recorded.json as ChatRequest);
    return json(200, { ...fixtureJson('openai/chat.json'), usage: { prompt_tokens: prompt, completion_tokens: 1, total_tokens: prompt + 1 } })(recorded, res);
  };
  t.teardown(() => void (upstream.fallback = openAIResponder()));
  return { release };
}

async function gatewayWith(t: { teardown(fn: () => unknown): void }, env: Record<string, string>): Promise<TestGateway> {
  const gateway = await startGateway({ ...PROTOCOL_ONLY, OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_MODEL_CATALOG: catalog, ...env });
  t.teardown(() => gateway.close());
  return gateway;
}

const send = (gateway: TestGateway) => call(gateway.url, '/chat/completions', { body: JSON.stringify(request) });
const spent = async (gateway: TestGateway) => (await call(gateway.url, '/usage')).json.budgets.day.spent_usd as number;

/** Sends `n` attacks at once, releases the answers once the admitted ones reached the upstream. */
async function attack(gateway: TestGateway, n: number, release: () => void): Promise<number[]> {
  const responses = Promise.all(Array.from({ length: n }, () => send(gateway)));
  // Admission is decided before the upstream is called: wait until the in-flight ones arrived.
  for (let i = 0; i < 50 && upstream.requests.length < n; i++) await sleep(20);
  release();
  return (await responses).map((response) => response.status);
}

const billedUsd = () => (o200kPromptTokens(request) + 1) * PRICE;

t.test('20 concurrent whitespace prompts against a $0.0005 daily limit: refused, nothing settled past the limit', async (t) => {
  const limit = 0.0005;
  const gateway = await gatewayWith(t, { MODELGATE_DAILY_COST_LIMIT: String(limit), MODELGATE_MAX_COST_PER_REQUEST: '1' });
  const { release } = billedLikeOpenAI(t);
  const statuses = await attack(gateway, 20, release);
  const settled = await spent(gateway);
  t.ok(statuses.every((status) => status === 429), `statuses: ${statuses.join(' ')}`);
  t.ok(settled <= limit + billedUsd(), `settled $${settled} ≤ limit $${limit} + one request's $${billedUsd().toFixed(6)}`);
});

t.test('a limit that holds one reservation of the attack: one admitted, billed no more than it reserved', async (t) => {
  const reserved = (estimatePromptTokens(request) + 1) * PRICE;
  const limit = 1.5 * reserved;
  const gateway = await gatewayWith(t, { MODELGATE_DAILY_COST_LIMIT: String(limit), MODELGATE_MAX_COST_PER_REQUEST: '1' });
  const { release } = billedLikeOpenAI(t);
  const statuses = await attack(gateway, 20, release);
  const settled = await spent(gateway);
  t.equal(statuses.filter((status) => status === 200).length, 1, `statuses: ${statuses.join(' ')}`);
  t.ok(billedUsd() <= reserved, `billed $${billedUsd().toFixed(6)} (o200k) ≤ reserved $${reserved.toFixed(6)}`);
  t.ok(settled <= limit, `settled $${settled} ≤ limit $${limit.toFixed(6)}`);
});

t.test('the per-request cap refuses the attack when its bound is over the cap', async (t) => {
  const gateway = await gatewayWith(t, { MODELGATE_MAX_COST_PER_REQUEST: '0.01' });
  const { release } = billedLikeOpenAI(t);
  release();
  const response = await send(gateway);
  t.ok(billedUsd() > 0.01, `the attack bills $${billedUsd().toFixed(4)}, over the cap`);
  t.equal(response.status, 429);
  t.equal(response.json.error.code, 'cost_per_request_exceeded');
  t.equal(upstream.requests.length, 0, 'the provider was not called');
});

t.test("images on gpt-4o-mini are reserved at what it bills for them (~48k tokens each), not the estimate's flat 1600", async (t) => {
  // gpt-4o-mini bills a high-detail image at 2833 + 5667 per 512 px tile, up to 8 tiles.
  const billedPerImage = 2833 + 8 * 5667;
  const image = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' } };
  const withImages: ChatRequest = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, ...Array.from({ length: 10 }, () => image)] }], max_tokens: 1 } as ChatRequest;
  const flat = (estimatePromptTokens(withImages) + 1) * PRICE;
  const billed = (10 * billedPerImage + 20) * PRICE;
  const cap = (flat + billed) / 2;
  const gateway = await gatewayWith(t, { MODELGATE_MAX_COST_PER_REQUEST: String(cap) });
  const response = await call(gateway.url, '/chat/completions', { body: JSON.stringify(withImages) });
  t.ok(flat < cap && cap < billed, `the flat estimate ($${flat.toFixed(4)}) is under the cap ($${cap.toFixed(4)}), the bill ($${billed.toFixed(4)}) over it`);
  t.equal(response.status, 429, 'refused: the reservation counts each image at gpt-4o-mini\'s most');
  t.equal(response.json.error.code, 'cost_per_request_exceeded');
  t.equal(upstream.requests.length, 0, 'the provider was not called');
});
