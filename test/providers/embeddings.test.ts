// Golden tests of the embeddings adapters: an OpenAI embeddings request becomes each provider's
// native request (path, headers, body; the recorded request fixture where there is one), each native
// answer comes back as OpenAI's list of float vectors in input order with the provider's usage (or
// the estimate), a body the protocol does not allow is a retryable bad_response, and token ids are
// refused with a 400 by every provider but the OpenAI-compatible ones. The fake providers are
// driven through the same adapters, so what the e2e tests use speaks each protocol as documented.
import t from 'tap';
import { loadCatalog, type CatalogModel } from '../../core/catalog.js';
import type { EmbeddingsRequest } from '../../core/embeddings-types.js';
import { isGatewayError } from '../../core/errors.js';
import { isUpstreamError } from '../../core/upstream-error.js';
import type { Provider, TranslateContext } from '../../core/provider.js';
import { openai } from '../../providers/openai/index.js';
import { custom } from '../../providers/custom/index.js';
import { mistral } from '../../providers/mistral/index.js';
import { google } from '../../providers/google/index.js';
import { cohere } from '../../providers/cohere/index.js';
import { anthropic } from '../../providers/anthropic/index.js';
import { FakeProvider, fixtureJson } from '../helpers/fake-provider.js';
import { FAKE_DIMENSIONS, PROVIDER_KEYS, cohereResponder, geminiResponder, mistralResponder, openAIResponder } from '../helpers/fakes.js';
import { rejection } from '../helpers/rejection.js';

const catalog = loadCatalog();
const providers = {
  openai: openai.create({ OPENAI_API_KEY: 'sk-key', OPENAI_BASE_URL: 'https://api.openai.com/v1' }),
  custom: custom.create({ CUSTOM_BASE_URL: 'http://localhost:8000/v1/', CUSTOM_API_KEY: 'c-key', CUSTOM_MODELS: [] }),
  mistral: mistral.create({ MISTRAL_API_KEY: 'mi-key', MISTRAL_BASE_URL: 'https://api.mistral.ai' }),
  google: google.create({ GOOGLE_API_KEY: 'g-key', GOOGLE_BASE_URL: 'https://generativelanguage.googleapis.com' }),
  cohere: cohere.create({ COHERE_API_KEY: 'co-key', COHERE_BASE_URL: 'https://api.cohere.com' }),
};
const models = {
  openai: catalog.get('openai', 'text-embedding-3-small')!,
  custom: { ...catalog.get('openai', 'text-embedding-3-small')!, provider: 'custom', id: 'nomic-embed-text', native_id: 'nomic-embed-text' },
  mistral: catalog.get('mistral', 'codestral-embed')!,
  google: catalog.get('google', 'gemini-embedding-001')!,
  cohere: catalog.get('cohere', 'embed-english-v3.0')!,
};
type Name = keyof typeof providers;
const context = (model: CatalogModel): TranslateContext => ({ model, stream: false, requestId: 'req-1' });
const build = (name: Name, request: EmbeddingsRequest, model: CatalogModel = models[name]) => providers[name].embeddingsRequest!(request, context(model));
const bodyOf = (name: Name, request: EmbeddingsRequest, model?: CatalogModel) => JSON.parse(build(name, request, model).body!);
const translate = (name: Name, body: unknown, inputs: number, estimatedTokens = 7, model: CatalogModel = models[name]) =>
  providers[name].embeddingsResponse!(body, { ...context(model), inputs, estimatedTokens });

const twoTexts: EmbeddingsRequest = { model: 'x', input: ['sunny day at the beach', 'rainy day in the city'] };

t.test('openai: the request passes through with the routed model and float vectors forced', async (t) => {
  const fixture = fixtureJson('openai/embeddings-request.json');
  const ada = catalog.get('openai', 'text-embedding-ada-002')!;
  const upstream = build('openai', { ...fixture, model: 'openai/text-embedding-ada-002', encoding_format: 'base64' }, ada);
  t.equal(upstream.url, 'https://api.openai.com/v1/embeddings');
  t.equal(upstream.method, 'POST');
  t.equal(upstream.headers.authorization, 'Bearer sk-key');
  t.strictSame(JSON.parse(upstream.body!), fixture, 'the fixture request: the client asked base64, the gateway asks float');
  const body = bodyOf('openai', { model: 'x', input: [[1, 2, 3], [4, 5]], dimensions: 256, user: 'u-1', vendor_hint: true });
  t.strictSame(body, { model: 'text-embedding-3-small', input: [[1, 2, 3], [4, 5]], dimensions: 256, user: 'u-1', vendor_hint: true, encoding_format: 'float' });
});

t.test('openai: the recorded answers come back as they are, in index order, with their usage', async (t) => {
  const single = fixtureJson('openai/embeddings.json');
  t.strictSame(translate('openai', fixtureJson('openai/embeddings.json'), 1), single);
  const batch = fixtureJson('openai/embeddings-batch.json');
  const shuffled = { ...batch, data: [batch.data[1], batch.data[0]] };
  const answer = translate('openai', shuffled, 2, 99);
  t.strictSame(answer.data.map((item) => item.index), [0, 1]);
  t.strictSame(answer.data[0]!.embedding, batch.data[0].embedding, 'put back in input order by index');
  t.strictSame(answer.usage, { prompt_tokens: 12, total_tokens: 12 }, "the provider's usage, not the estimate");
  t.strictSame(translate('openai', { ...batch, usage: undefined }, 2, 99).usage, { prompt_tokens: 99, total_tokens: 99 }, 'the estimate when none is reported');
});

t.test('custom: the same pass-through at the server of CUSTOM_BASE_URL, token ids included', async (t) => {
  const upstream = build('custom', { model: 'custom/nomic-embed-text', input: [101, 2023, 102] });
  t.equal(upstream.url, 'http://localhost:8000/v1/embeddings');
  t.equal(upstream.headers.authorization, 'Bearer c-key');
  t.strictSame(JSON.parse(upstream.body!), { model: 'nomic-embed-text', input: [101, 2023, 102], encoding_format: 'float' });
  const answer = translate('custom', { data: [{ embedding: [0.5, -0.5] }] }, 1, 3);
  t.strictSame(answer, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.5, -0.5] }], model: 'nomic-embed-text', usage: { prompt_tokens: 3, total_tokens: 3 } }, 'a server that leaves out index, model and usage');
});

t.test('mistral: an allow-listed body at /v1/embeddings, dimensions as output_dimension', async (t) => {
  const upstream = build('mistral', { model: 'x', input: 'def f(): pass', dimensions: 256, user: 'u-1', encoding_format: 'base64' });
  t.equal(upstream.url, 'https://api.mistral.ai/v1/embeddings');
  t.equal(upstream.headers.authorization, 'Bearer mi-key');
  t.strictSame(JSON.parse(upstream.body!), { model: 'codestral-embed', input: ['def f(): pass'], output_dimension: 256, output_dtype: 'float', encoding_format: 'float' }, 'user dropped: Mistral refuses unknown fields');
  const body = { id: 'embd-1', object: 'list', data: [{ object: 'embedding', embedding: [0.1, 0.2], index: 0 }], model: 'codestral-embed', usage: { prompt_tokens: 5, total_tokens: 5, completion_tokens: 0 } };
  t.strictSame(translate('mistral', body, 1), { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], model: 'codestral-embed', usage: { prompt_tokens: 5, total_tokens: 5 } });
});

t.test('google: one EmbedContentRequest per text at :batchEmbedContents, with the chat key header', async (t) => {
  const upstream = build('google', { ...twoTexts, dimensions: 768, user: 'u-1' });
  t.equal(upstream.url, 'https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents');
  t.equal(upstream.headers['x-goog-api-key'], 'g-key');
  t.strictSame(JSON.parse(upstream.body!), {
    requests: (twoTexts.input as string[]).map((text) => ({ model: 'models/gemini-embedding-001', content: { parts: [{ text }] }, outputDimensionality: 768 })),
  });
  t.notOk('outputDimensionality' in bodyOf('google', twoTexts).requests[0], 'no dimensions asked, none sent');
  const answer = translate('google', { embeddings: [{ values: [0.1, 0.2] }, { values: [0.3, 0.4] }] }, 2, 11);
  t.strictSame(answer.data.map((item) => item.embedding), [[0.1, 0.2], [0.3, 0.4]]);
  t.strictSame(answer.usage, { prompt_tokens: 11, total_tokens: 11 }, 'Gemini reports no usage: the estimate');
  t.equal(answer.model, 'gemini-embedding-001');
});

t.test('cohere: the recorded embed request and answer; input_type search_document unless the client names one', async (t) => {
  const fixture = fixtureJson('cohere/embed-request.json');
  const upstream = build('cohere', { ...twoTexts, input_type: 'search_query' });
  t.equal(upstream.url, 'https://api.cohere.com/v2/embed');
  t.equal(upstream.headers.authorization, 'Bearer co-key');
  t.strictSame(JSON.parse(upstream.body!), fixture);
  t.equal(bodyOf('cohere', twoTexts).input_type, 'search_document');
  const v4 = catalog.get('cohere', 'embed-v4.0')!;
  t.equal(bodyOf('cohere', { ...twoTexts, dimensions: 512 }, v4).output_dimension, 512);
  const recorded = fixtureJson('cohere/embed.json');
  t.strictSame(translate('cohere', recorded, 2, 99), {
    object: 'list',
    data: recorded.embeddings.float.map((embedding: number[], index: number) => ({ object: 'embedding', index, embedding })),
    model: 'embed-english-v3.0',
    usage: { prompt_tokens: 10, total_tokens: 10 },
  });
  t.strictSame(translate('cohere', { ...recorded, meta: {} }, 2, 99).usage, { prompt_tokens: 99, total_tokens: 99 });
});

t.test('token ids are refused with a 400 naming input by every native provider', async (t) => {
  for (const name of ['mistral', 'google', 'cohere'] as const) {
    for (const input of [[1, 2, 3], [[1, 2], [3]]]) {
      const error = rejection(() => build(name, { model: 'x', input }));
      t.ok(isGatewayError(error), `${name}: a 400 before any upstream call`);
      t.match(error, { status: 400, param: 'input', message: new RegExp(`${name} embeds text only`) });
    }
  }
});

t.test('a body the protocol does not allow is a retryable bad_response', async (t) => {
  const cases: Array<[Name, unknown, number, string]> = [
    ['openai', { data: 'nope' }, 1, 'no data list'],
    ['openai', { data: [{ index: 0, embedding: [0.1] }] }, 2, 'one vector for two inputs'],
    ['openai', { data: [{ index: 0, embedding: [0.1] }, { index: 0, embedding: [0.2] }] }, 2, 'a repeated index'],
    ['openai', { data: [{ index: 0, embedding: 'AAAA' }] }, 1, 'base64 when float was asked'],
    ['custom', { data: [{ index: 0, embedding: [0.1, '0.2'] }] }, 1, 'a string value'],
    ['mistral', { data: [{ index: 0, embedding: [] }] }, 1, 'an empty vector'],
    ['mistral', null, 1, 'no body'],
    ['google', { embeddings: [{ values: [0.1] }] }, 2, 'one vector for two inputs'],
    ['google', { embeddings: [{ value: [0.1] }] }, 1, 'no values'],
    ['cohere', { embeddings: { int8: [[1]] } }, 1, 'no float vectors'],
    ['cohere', { embeddings: { float: [[0.1, null]] } }, 1, 'a null value'],
  ];
  for (const [name, body, inputs, why] of cases) {
    const error = rejection(() => translate(name, body, inputs));
    t.ok(isUpstreamError(error), `${name}: ${why}`);
    t.match(error, { reason: 'bad_response', retryable: true, status: 502, provider: name }, `${name}: ${why}`);
  }
});

t.test('anthropic has no embeddings endpoint', async (t) => {
  const provider: Provider = anthropic.create({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_VERSION: '2023-06-01', ANTHROPIC_BASE_URL: 'https://api.anthropic.com' });
  t.equal(provider.embeddingsRequest, undefined);
  t.equal(provider.embeddingsResponse, undefined);
});

t.test('the fake providers answer what each adapter sends: one vector a text, of the asked length, with their usage', async (t) => {
  const fakes = {
    openai: await FakeProvider.start(openAIResponder()),
    mistral: await FakeProvider.start(mistralResponder()),
    google: await FakeProvider.start(geminiResponder()),
    cohere: await FakeProvider.start(cohereResponder()),
  };
  t.teardown(() => Promise.all(Object.values(fakes).map((fake) => fake.close())));
  const against = {
    openai: openai.create({ OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${fakes.openai.url}/v1` }),
    mistral: mistral.create({ MISTRAL_API_KEY: PROVIDER_KEYS.mistral, MISTRAL_BASE_URL: fakes.mistral.url }),
    google: google.create({ GOOGLE_API_KEY: PROVIDER_KEYS.google, GOOGLE_BASE_URL: fakes.google.url }),
    cohere: cohere.create({ COHERE_API_KEY: PROVIDER_KEYS.cohere, COHERE_BASE_URL: fakes.cohere.url }),
  };
  const call = async (name: keyof typeof against, request: EmbeddingsRequest, inputs: number) => {
    const upstream = against[name].embeddingsRequest!(request, context(models[name]));
    const response = await fetch(upstream.url, { method: upstream.method, headers: upstream.headers, body: upstream.body });
    t.equal(response.status, 200, `${name} answered`);
    return against[name].embeddingsResponse!(await response.json(), { ...context(models[name]), inputs, estimatedTokens: 1000 });
  };
  for (const name of Object.keys(against) as Array<keyof typeof against>) {
    const dimensions = name === 'cohere' ? undefined : 16; // embed-english-v3.0 takes no output_dimension
    const answer = await call(name, { model: 'x', input: ['alpha', 'beta gamma', 'alpha'], dimensions }, 3);
    t.equal(answer.data.length, 3, `${name}: one vector a text`);
    t.ok(answer.data.every((item) => item.embedding.length === (dimensions ?? FAKE_DIMENSIONS)), `${name}: of the asked length`);
    t.strictSame(answer.data[0]!.embedding, answer.data[2]!.embedding, `${name}: the same text, the same vector`);
    t.notSame(answer.data[0]!.embedding, answer.data[1]!.embedding);
    t.ok(Math.abs(Math.hypot(...answer.data[1]!.embedding) - 1) < 1e-9, `${name}: unit vectors`);
    if (name === 'google') t.equal(answer.usage.prompt_tokens, 1000, 'google: the estimate');
    else t.ok(answer.usage.prompt_tokens > 0 && answer.usage.prompt_tokens < 1000, `${name}: usage as the provider reports it`);
  }
  const recorded = await call('cohere', { ...twoTexts, input_type: 'search_query' }, 2);
  t.strictSame(recorded.data[1]!.embedding, fixtureJson('cohere/embed.json').embeddings.float[1], 'the fixture for the fixture texts');
  const ada = await call('openai', { model: 'x', input: fixtureJson('openai/embeddings-request.json').input }, 1);
  t.equal(ada.data[0]!.embedding.length, 256, 'the recorded OpenAI answer for its recorded input');
  fakes.openai.requests.length = 0;
  const upstream = against.openai.embeddingsRequest!({ model: 'x', input: 'hi' }, context(models.openai));
  const refused = await fetch(upstream.url, { method: 'POST', headers: { ...upstream.headers, authorization: 'Bearer wrong' }, body: upstream.body });
  t.equal(refused.status, 401, 'the same key check as the chat endpoint');
});
