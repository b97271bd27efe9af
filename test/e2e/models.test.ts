// GET /v1/models/{model} through the real server with the real OpenAI SDK: every id the list shows
// retrieves that same entry (ids with a slash sent encoded or raw), aliases and provider pins
// retrieve their model's entry, anything else is OpenAI's 404, and a key is needed as for the list.
import t from 'tap';
import { startGateway, call, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { checkError } from '../helpers/schema.js';
import type { FakeProvider } from '../helpers/fake-provider.js';

let upstream: FakeProvider;
let gateway: TestGateway;
let listed: Array<Record<string, unknown> & { id: string }>;

t.before(async () => {
  upstream = await startFakeOpenAI();
  gateway = await startGateway({
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    // The custom server also serves gpt-4o-mini: the list names both entries `provider/id`.
    CUSTOM_BASE_URL: `${upstream.url}/v1`,
    CUSTOM_MODELS: 'gpt-4o-mini,my-local-model',
  });
  listed = (await call(gateway.url, '/models')).json.data;
});
t.after(async () => {
  await gateway.close();
  await upstream.close();
});

t.test('the SDK retrieves a listed model as the list shows it', async (t) => {
  const model = await gateway.client().models.retrieve('gpt-4o');
  t.same(model, listed.find((entry) => entry.id === 'gpt-4o'));
  t.match(model, { id: 'gpt-4o', object: 'model', owned_by: 'openai', provider: 'openai', available: true });
  t.type(model.created, 'number');
});

t.test('every id the list shows is retrieved, slashes encoded (the SDK) or raw', async (t) => {
  t.ok(listed.some((entry) => entry.id === 'openai/gpt-4o-mini') && listed.some((entry) => entry.id === 'custom/gpt-4o-mini'), 'the list has ids with a slash');
  const client = gateway.client();
  for (const entry of listed) {
    t.same(await client.models.retrieve(entry.id), entry, `SDK: ${entry.id}`);
    const raw = await call(gateway.url, `/models/${entry.id}`);
    t.equal(raw.status, 200, `raw path: ${entry.id}`);
    t.same(raw.json, entry, `raw path: ${entry.id}`);
  }
  const encoded = await call(gateway.url, '/models/custom%2Fgpt-4o-mini');
  t.equal(encoded.json.owned_by, 'custom', '%2F is a slash');
  t.equal(upstream.requests.length, 0, 'no provider was asked');
});

t.test('an alias or a provider pin retrieves its model, under the id the list shows', async (t) => {
  const client = gateway.client();
  t.equal((await client.models.retrieve('gpt-4o-2024-08-06')).id, 'gpt-4o');
  t.equal((await client.models.retrieve('openai/gpt-4o')).id, 'gpt-4o');
  t.equal((await client.models.retrieve('anthropic/claude-sonnet-4-5-20250929')).id, 'claude-sonnet-4-5');
});

t.test('an unknown model is 404 Model not found, as OpenAI answers it', async (t) => {
  await t.rejects(gateway.client().models.retrieve('gpt-nope'), { status: 404, message: /Model not found/ });
  // An id several providers serve names no single model; the custom server's unlisted models are unknown here.
  for (const name of ['gpt-nope', 'gpt-4o-mini', 'custom/unlisted-model', 'acme/gpt-4o', 'auto/gpt-4o', 'gpt-4o/']) {
    const response = await call(gateway.url, `/models/${encodeURIComponent(name)}`);
    t.equal(response.status, 404, name);
    t.equal(checkError(response.json), null, `${name}: an OpenAI error body`);
    t.same(response.json.error, { message: 'Model not found', type: 'invalid_request_error', param: 'model', code: 'model_not_found' }, name);
    t.ok(response.headers.get('x-request-id'), `${name}: x-request-id`);
  }
  t.equal((await call(gateway.url, '/models/')).status, 404, 'no id at all is no model');
  const broken = await call(gateway.url, '/models/%E0%A4%A');
  t.equal(broken.status, 400, 'a broken percent-encoding is a bad request');
  t.equal(broken.json.error.param, 'model');
});

t.test('retrieving a model needs a key, as listing does', async (t) => {
  await t.rejects(gateway.client({ apiKey: 'uc_wrong' }).models.retrieve('gpt-4o'), { status: 401, message: /Invalid API key/ });
  for (const key of [null, 'uc_wrong']) {
    const response = await call(gateway.url, '/models/gpt-4o', { key });
    t.equal(response.status, 401);
    t.equal(response.json.error.message, 'Invalid API key');
    t.match(response.headers.get('www-authenticate'), /^Bearer realm="modelgate"/);
    t.equal((await call(gateway.url, '/models', { key })).status, 401, 'the list says the same');
  }
});

t.end();
