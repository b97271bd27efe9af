// POST /v1/embeddings through the real gateway and the openai SDK, against fake providers speaking
// their native embeddings APIs: each provider's vectors, both encodings, usage and cost, the cache,
// routing among embedding models only, failover to the same model only, and the refusals.
import t from 'tap';
import { APIError } from 'openai';
import { startGateway, GATEWAY_KEY, type TestGateway } from '../helpers/gateway.js';
import { startFakeCohere, startFakeGemini, startFakeMistral, startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { fixtureJson, json, type FakeProvider } from '../helpers/fake-provider.js';
import { scrape } from '../helpers/metrics.js';

let openai: FakeProvider;
let cohere: FakeProvider;
let gemini: FakeProvider;
let mistral: FakeProvider;
let gateway: TestGateway;

t.before(async () => {
  [openai, cohere, gemini, mistral] = await Promise.all([startFakeOpenAI(), startFakeCohere(), startFakeGemini(), startFakeMistral()]);
  gateway = await startGateway({
    MODELGATE_RETRIES: '0',
    MODELGATE_FAILOVER_DELAY: '0',
    MODELGATE_CIRCUIT_BREAKER_ENABLED: 'false',
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${openai.url}/v1`,
    COHERE_API_KEY: PROVIDER_KEYS.cohere,
    COHERE_BASE_URL: cohere.url,
    GOOGLE_API_KEY: PROVIDER_KEYS.google,
    GOOGLE_BASE_URL: gemini.url,
    MISTRAL_API_KEY: PROVIDER_KEYS.mistral,
    MISTRAL_BASE_URL: mistral.url,
  });
});
t.after(async () => {
  await gateway.close();
  await Promise.all([openai, cohere, gemini, mistral].map((fake) => fake.close()));
});
t.beforeEach(() => [openai, cohere, gemini, mistral].forEach((fake) => fake.reset()));

const fixtureVector = (fixtureJson('openai/embeddings.json') as { data: Array<{ embedding: number[] }> }).data[0]!.embedding;
const FIXTURE_INPUT = 'The food was delicious and the waiter...';

t.test('OpenAI: the recorded vector, float and base64 (decoded by the SDK to the same floats), usage priced', async (t) => {
  const client = gateway.client();
  const float = await client.embeddings.create({ model: 'text-embedding-ada-002', input: FIXTURE_INPUT, encoding_format: 'float' }, { headers: { 'x-modelgate-cache': 'bypass' } }).withResponse();
  t.same(float.data.data[0]!.embedding, fixtureVector);
  t.equal(openai.last!.url, '/v1/embeddings');
  t.equal(openai.last!.json.encoding_format, 'float', 'the upstream is always asked for floats');
  t.equal(float.response.headers.get('x-modelgate-provider'), 'openai');
  t.equal(float.response.headers.get('x-modelgate-model'), 'text-embedding-ada-002');
  const usage = float.data.usage;
  t.ok(usage.prompt_tokens > 0);
  t.ok(Math.abs(Number(float.response.headers.get('x-modelgate-cost')) - usage.prompt_tokens * 1e-7) < 1e-12, 'priced at the catalog input price');
  // The SDK's default asks for base64 and decodes it: the same floats, at float32 precision.
  const base64 = await client.embeddings.create({ model: 'text-embedding-ada-002', input: FIXTURE_INPUT }, { headers: { 'x-modelgate-cache': 'bypass' } });
  const decoded = base64.data[0]!.embedding;
  t.equal(decoded.length, fixtureVector.length);
  t.ok(decoded.every((v, i) => Math.abs(v - Math.fround(fixtureVector[i]!)) < 1e-7));
});

t.test('each provider answers a batch in input order, with the dimensions asked for', async (t) => {
  const client = gateway.client();
  const input = ['sunny day at the beach', 'rainy day in the city', 'a third text'];
  for (const [model, fake, path] of [
    ['text-embedding-3-small', () => openai, '/v1/embeddings'],
    ['embed-v4.0', () => cohere, '/v2/embed'],
    ['gemini-embedding-001', () => gemini, '/v1beta/models/gemini-embedding-001:batchEmbedContents'],
    ['mistral-embed', () => mistral, '/v1/embeddings'],
  ] as const) {
    const dimensions = model === 'mistral-embed' ? undefined : 16;
    const { data, response } = await client.embeddings
      .create({ model, input, encoding_format: 'float', ...(dimensions ? { dimensions } : {}) }, { headers: { 'x-modelgate-cache': 'bypass' } })
      .withResponse();
    t.equal(fake().last!.url, path, `${model}: native endpoint`);
    t.same(data.data.map((d) => d.index), [0, 1, 2], `${model}: in order`);
    if (dimensions) t.ok(data.data.every((d) => d.embedding.length === dimensions), `${model}: ${dimensions} dimensions`);
    t.equal(data.model, model);
    t.ok(data.usage.prompt_tokens > 0, `${model}: usage`);
    t.ok(Number(response.headers.get('x-modelgate-cost')) > 0, `${model}: priced`);
  }
});

t.test('a repeated request is a cache hit in either encoding; metrics count the route and the embedding model', async (t) => {
  const client = gateway.client();
  const body = { model: 'text-embedding-3-small', input: ['cache me'], encoding_format: 'float' as const };
  const first = await client.embeddings.create(body).withResponse();
  const second = await client.embeddings.create({ ...body, encoding_format: 'base64' as const }).withResponse();
  t.equal(first.response.headers.get('x-modelgate-cache'), 'MISS');
  t.equal(second.response.headers.get('x-modelgate-cache'), 'HIT');
  t.equal(second.response.headers.get('x-modelgate-cost'), '0');
  t.equal(openai.requests.length, 1, 'one upstream call for both encodings');
  // Asked for explicitly, base64 reaches the client as is: float32 little-endian.
  const bytes = Buffer.from(second.data.data[0]!.embedding as unknown as string, 'base64');
  const floats = Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
  t.same(floats, first.data.data[0]!.embedding.map((v) => Math.fround(v)));
  // Any other field may change the vectors (a custom server's own options): a different key.
  const other = await client.embeddings.create({ ...body, normalize: false } as never).withResponse();
  t.equal(other.response.headers.get('x-modelgate-cache'), 'MISS');
  const metrics = await scrape(gateway.url);
  const served = metrics.series('modelgate_requests_total').filter((s) => s.labels.route === 'POST /v1/embeddings' && s.labels.model === 'text-embedding-3-small');
  t.ok(served.some((s) => s.labels.cache === 'hit'));
  t.ok(served.reduce((sum, s) => sum + s.value, 0) >= 2);
  t.ok(metrics.series('modelgate_tokens_total').some((s) => s.labels.model === 'text-embedding-3-small'));
});

t.test('embeddings appear in the usage report, by model, with their tokens and cost', async (t) => {
  const day = new Date().toISOString().slice(0, 10);
  const response = await fetch(`${gateway.url}/usage?from=${day}&to=${day}`, { headers: { authorization: `Bearer ${GATEWAY_KEY}` } });
  const report = (await response.json()) as { range: { by_model: Array<{ provider: string; model: string; requests: number; prompt_tokens: number; cost_usd: number }> } };
  const row = report.range.by_model.find((entry) => entry.model === 'text-embedding-ada-002');
  t.ok(row && row.requests >= 2 && row.prompt_tokens > 0 && row.cost_usd > 0, JSON.stringify(row));
});

t.test('routing never mixes kinds: auto is refused for embeddings, chat never goes to an embedding model, nor embeddings to a chat model', async (t) => {
  const client = gateway.client();
  const auto = await client.embeddings.create({ model: 'auto', input: 'x', encoding_format: 'float' }).catch((e: unknown) => e);
  t.ok(auto instanceof APIError && auto.status === 400, 'auto could change models between requests');
  t.equal((auto as APIError).param, 'model');
  t.match((auto as APIError).message, /not comparable/);
  const chat = await client.chat.completions.create({ model: 'text-embedding-3-small', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
  t.ok(chat instanceof APIError && chat.status === 400);
  t.match((chat as APIError).message, /embedding model/);
  const wrong = await client.embeddings.create({ model: 'gpt-4o-mini', input: 'x' }).catch((e: unknown) => e);
  t.ok(wrong instanceof APIError && wrong.status === 400);
  t.match((wrong as APIError).message, /not an embedding model/);
});

t.test('failover stays on the same model: another model is never tried, and asking for one is refused', async (t) => {
  const client = gateway.client();
  openai.next(json(500, fixtureJson('openai/error-500.json')));
  const failed = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'x' }, { maxRetries: 0, headers: { 'x-modelgate-cache': 'bypass' } }).catch((e: unknown) => e);
  t.ok(failed instanceof APIError && failed.status >= 500, 'no other model answers');
  t.equal(cohere.requests.length + gemini.requests.length + mistral.requests.length, 0);
  const mixed = await client.embeddings
    .create({ model: 'text-embedding-3-small', input: 'x', modelgate: { failover: { fallback_models: ['embed-v4.0'] } } } as never)
    .catch((e: unknown) => e);
  t.ok(mixed instanceof APIError && mixed.status === 400);
  t.equal((mixed as APIError).param, 'modelgate.failover.fallback_models');
});

t.test('bad input is a 400 naming the field, before any provider is called', async (t) => {
  const client = gateway.client();
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ model: 'text-embedding-3-small', input: '' }, 'input'],
    [{ model: 'text-embedding-3-small', input: [] }, 'input'],
    [{ model: 'text-embedding-3-small', input: ['ok', ''] }, 'input[1]'],
    [{ model: 'text-embedding-3-small', input: Array(2049).fill('x') }, 'input'],
    [{ model: 'text-embedding-3-small', input: 'x', dimensions: 0 }, 'dimensions'],
    [{ model: 'text-embedding-3-small', input: 'x', encoding_format: 'int8' }, 'encoding_format'],
    [{ model: 'embed-v4.0', input: [1, 2, 3] }, 'input'],
  ];
  for (const [body, param] of cases) {
    const error = await client.embeddings.create(body as never, { headers: { 'x-modelgate-cache': 'bypass' } }).catch((e: unknown) => e);
    t.ok(error instanceof APIError && error.status === 400, `${JSON.stringify(body).slice(0, 60)}: 400`);
    t.equal((error as APIError).param, param);
  }
  t.equal(openai.requests.length + cohere.requests.length, 0);
  // Token ids reach an OpenAI-compatible upstream as they are.
  await client.embeddings.create({ model: 'text-embedding-3-small', input: [[1, 2, 3]], encoding_format: 'float' });
  t.same(openai.last!.json.input, [[1, 2, 3]]);
});

t.end();
