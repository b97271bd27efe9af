// POST /v1/embeddings through the OpenAI SDK: float vectors, the SDK's default (base64, which the SDK
// decodes), a batch, `dimensions`, and an empty input refused with 400 — against OpenAI and, through
// translation, Cohere, Gemini and Mistral. Every fake answers the same known vector for a text
// (fakeVector, test/helpers/fakes.ts), so each row can check the numbers, not just the shape.
import t from 'tap';
import OpenAI from 'openai';
import { startGateway, call, PROTOCOL_ONLY, type TestGateway } from '../helpers/gateway.js';
import { FAKE_DIMENSIONS, PROVIDER_KEYS, fakeVector, startFakeCohere, startFakeGemini, startFakeMistral, startFakeOpenAI } from '../helpers/fakes.js';
import type { FakeProvider } from '../helpers/fake-provider.js';
import { checkEmbeddings, checkResponsesError } from '../helpers/responses-schema.js';

type EmbeddingProvider = 'openai' | 'cohere' | 'google' | 'mistral';
const upstreams = {} as Record<EmbeddingProvider, FakeProvider>;
let gateway: TestGateway;

t.before(async () => {
  upstreams.openai = await startFakeOpenAI();
  upstreams.cohere = await startFakeCohere();
  upstreams.google = await startFakeGemini();
  upstreams.mistral = await startFakeMistral();
  gateway = await startGateway({
    ...PROTOCOL_ONLY,
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstreams.openai.url}/v1`,
    COHERE_API_KEY: PROVIDER_KEYS.cohere,
    COHERE_BASE_URL: upstreams.cohere.url,
    GOOGLE_API_KEY: PROVIDER_KEYS.google,
    GOOGLE_BASE_URL: upstreams.google.url,
    MISTRAL_API_KEY: PROVIDER_KEYS.mistral,
    MISTRAL_BASE_URL: upstreams.mistral.url,
  });
});
t.teardown(async () => {
  await gateway?.close();
  for (const upstream of Object.values(upstreams)) await upstream.close();
});
t.beforeEach(() => {
  for (const upstream of Object.values(upstreams)) upstream.reset();
});

interface Row {
  provider: EmbeddingProvider;
  model: string;
  /** The native endpoint the gateway should call. */
  path: RegExp;
  /** Where the native request carries `dimensions`, or undefined when the model takes none. */
  nativeDimensions?: (body: any) => unknown;
  /** The texts as the native request carries them. */
  nativeTexts: (body: any) => unknown;
}

const rows: Row[] = [
  { provider: 'openai', model: 'text-embedding-3-small', path: /^\/v1\/embeddings$/, nativeDimensions: (body) => body.dimensions, nativeTexts: (body) => body.input },
  { provider: 'cohere', model: 'embed-v4.0', path: /^\/v2\/embed$/, nativeDimensions: (body) => body.output_dimension, nativeTexts: (body) => body.texts },
  {
    provider: 'google',
    model: 'gemini-embedding-001',
    path: /^\/v1beta\/models\/gemini-embedding-001:batchEmbedContents$/,
   
    nativeDimensions: (body) => body.requests?.[0]?.outputDimensionality,
    nativeTexts: (body) => body.requests?.map((request: any) => request.content.parts[0].text),
  },
  { provider: 'mistral', model: 'mistral-embed', path: /^\/v1\/embeddings$/, nativeTexts: (body) => body.input },
];

for (const row of rows) {
  t.test(`${row.provider} (${row.model}): float vectors, schema-valid, from the native endpoint`, async (t) => {
    const { data: answer, response } = await gateway.client().embeddings.create({ model: row.model, input: 'The food was delicious', encoding_format: 'float' }).withResponse();
    t.equal(checkEmbeddings(answer), null);
    t.equal(answer.object, 'list');
    t.equal(answer.data.length, 1);
    t.same(answer.data[0]!.embedding, fakeVector('The food was delicious', FAKE_DIMENSIONS));
    t.equal(answer.data[0]!.index, 0);
    t.ok(answer.usage.prompt_tokens > 0, 'usage');
    t.equal(answer.usage.total_tokens, answer.usage.prompt_tokens);
    t.equal(response.headers.get('x-modelgate-provider'), row.provider);
    const seen = upstreams[row.provider].last!;
    t.match(seen?.url, row.path);
    t.same([row.nativeTexts(seen.json)].flat(), ['The food was delicious']);
    t.notOk(seen.body.includes('uc_'), 'no gateway key upstream');
  });

  t.test(`${row.provider} (${row.model}): the SDK's default, base64, decodes to the float answer`, async (t) => {
    const client = gateway.client();
    const decoded = await client.embeddings.create({ model: row.model, input: 'The food was delicious' });
    const float = await client.embeddings.create({ model: row.model, input: 'The food was delicious', encoding_format: 'float' });
    t.equal(decoded.data[0]!.embedding.length, FAKE_DIMENSIONS);
    t.same(decoded.data[0]!.embedding, float.data[0]!.embedding.map(toFloat32), 'the float answer, as float32');
    const raw = await call(gateway.url, '/embeddings', { body: JSON.stringify({ model: row.model, input: 'The food was delicious', encoding_format: 'base64' }) });
    t.equal(raw.status, 200);
    t.type(raw.json.data[0].embedding, 'string', 'on the wire: a base64 string');
    const bytes = Buffer.from(raw.json.data[0].embedding, 'base64');
    t.equal(bytes.length, FAKE_DIMENSIONS * 4, 'of float32 values');
  });

  t.test(`${row.provider} (${row.model}): a batch comes back one vector per input, in order`, async (t) => {
    const texts = ['sunny day at the beach', 'rainy day in the city', 'snow in the mountains'];
    const answer = await gateway.client().embeddings.create({ model: row.model, input: texts, encoding_format: 'float' });
    t.equal(checkEmbeddings(answer), null);
    t.same(
      answer.data.map((item) => item.index),
      [0, 1, 2],
    );
    t.same(
      answer.data.map((item) => item.embedding),
      texts.map((text) => fakeVector(text, FAKE_DIMENSIONS)),
    );
    t.equal(upstreams[row.provider].requests.length, 1, 'in one upstream call');
    t.same(row.nativeTexts(upstreams[row.provider].last!.json), texts);
  });

  if (row.nativeDimensions) {
    const nativeDimensions = row.nativeDimensions;
    t.test(`${row.provider} (${row.model}): dimensions shortens the vectors, asked of the upstream natively`, async (t) => {
      const answer = await gateway.client().embeddings.create({ model: row.model, input: 'The food was delicious', dimensions: 256, encoding_format: 'float' });
      t.equal(answer.data[0]!.embedding.length, 256);
      t.same(answer.data[0]!.embedding, fakeVector('The food was delicious', 256));
      t.equal(nativeDimensions(upstreams[row.provider].last!.json), 256);
    });
  }

  t.test(`${row.provider} (${row.model}): an empty input is a 400 BadRequestError`, async (t) => {
    for (const input of ['', [] as string[]]) {
      const error = await gateway
        .client()
        .embeddings.create({ model: row.model, input, encoding_format: 'float' })
        .catch((caught: unknown) => caught);
      t.ok(error instanceof OpenAI.BadRequestError, `${JSON.stringify(input)}: BadRequestError (got ${String(error)})`);
    }
    const raw = await call(gateway.url, '/embeddings', { body: JSON.stringify({ model: row.model, input: '' }) });
    t.equal(raw.status, 400);
    t.equal(checkResponsesError(raw.json), null, 'an OpenAI error body');
  });
}

t.test('a chat model is not an embeddings model, nor the other way round', async (t) => {
  const chatAsEmbeddings = await gateway.client().embeddings.create({ model: 'gpt-4o-mini', input: 'hello' }).catch((caught: unknown) => caught);
  t.ok(chatAsEmbeddings instanceof OpenAI.APIError && chatAsEmbeddings.status >= 400 && chatAsEmbeddings.status < 500, `embeddings with a chat model: a 4xx (got ${String(chatAsEmbeddings)})`);
  const embeddingsAsChat = await gateway
    .client()
    .chat.completions.create({ model: 'text-embedding-3-small', messages: [{ role: 'user', content: 'hello' }] })
    .catch((caught: unknown) => caught);
  t.ok(embeddingsAsChat instanceof OpenAI.APIError && embeddingsAsChat.status >= 400 && embeddingsAsChat.status < 500, `chat with an embeddings model: a 4xx (got ${String(embeddingsAsChat)})`);
  t.equal(upstreams.openai.requests.length, 0, 'neither reaches OpenAI');
});

/** What a number becomes on the way through base64 (float32 little-endian). */
function toFloat32(value: number): number {
  return Math.fround(value);
}
