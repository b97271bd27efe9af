// A key restricted to some models (allowed_models: `model`, `provider/model`, `provider/*`): 403
// model_not_allowed for any other (the SDK's PermissionDeniedError), `auto` chooses only within the
// allowed set, failover never tries a candidate outside it, and GET /v1/models lists only it.
import t from 'tap';
import OpenAI from 'openai';
import { call, startGateway, type TestGateway } from '../helpers/gateway.js';
import { checkError } from '../helpers/schema.js';
import { failing, startDuo } from '../helpers/failover.js';
import { keyStore } from '../helpers/keys.js';

const { primary, secondary, catalog, env } = await startDuo(t);

// openai serves duo and the cheapest model, solo; custom serves duo (dearer) and other.
const models = catalog('allowed.json', [
  { provider: 'openai', id: 'duo', native: 'gpt-4o-mini', price: 1e-7 },
  { provider: 'custom', id: 'duo', native: 'llama', price: 2e-7 },
  { provider: 'openai', id: 'solo', native: 'gpt-4o-mini', price: 5e-8 },
  { provider: 'custom', id: 'other', native: 'llama', price: 3e-7 },
]);

const CUSTOM_ONLY = 'uc_custom_only_0123456789abcdef';
const PINNED = 'uc_pinned_duo_0123456789abcdef';
const BY_NAME = 'uc_by_name_0123456789abcdefgh';
const keys = keyStore({
  [CUSTOM_ONLY]: { allowedModels: ['custom/*'] },
  [PINNED]: { allowedModels: ['openai/duo'] },
  [BY_NAME]: { allowedModels: ['duo'] },
});

let gateway: TestGateway;
t.before(async () => {
  gateway = await startGateway(env({ MODELGATE_MODEL_CATALOG: models, MODELGATE_RETRIES: '1' }), { keyStores: [keys] });
});
t.after(() => gateway.close());

const chat = (model: string, extra: Record<string, unknown> = {}) => JSON.stringify({ model, messages: [{ role: 'user', content: 'What is the capital of France?' }], ...extra });

t.test('a model outside the key\'s allowed set is refused with 403 model_not_allowed, before any provider is called', async (t) => {
  const refused = await call(gateway.url, '/chat/completions', { key: CUSTOM_ONLY, body: chat('solo') });
  t.equal(refused.status, 403);
  t.equal(checkError(refused.json), null);
  t.same(refused.json.error, { message: 'This API key may not use this model', type: 'permission_error', param: 'model', code: 'model_not_allowed' });
  const pinnedElsewhere = await call(gateway.url, '/chat/completions', { key: PINNED, body: chat('custom/duo') });
  t.equal(pinnedElsewhere.json.error?.code, 'model_not_allowed', 'openai/duo does not allow custom/duo');
  const client = new OpenAI({ apiKey: CUSTOM_ONLY, baseURL: gateway.url, maxRetries: 0 });
  const error = await client.chat.completions.create({ model: 'solo', messages: [{ role: 'user', content: 'Hi' }] }).catch((caught: unknown) => caught);
  t.ok(error instanceof OpenAI.PermissionDeniedError, 'the SDK raises PermissionDeniedError');
  t.equal(primary.requests.length + secondary.requests.length, 0, 'no provider was called');
});

t.test('a named model is served only by the providers the key may use', async (t) => {
  const answered = await call(gateway.url, '/chat/completions', { key: CUSTOM_ONLY, body: chat('duo') });
  t.equal(answered.status, 200);
  t.equal(answered.headers.get('x-modelgate-provider'), 'custom', 'not openai, although it is cheaper');
  t.equal(primary.requests.length, 0);
});

t.test('auto chooses only within the allowed set', async (t) => {
  const answered = await call(gateway.url, '/chat/completions', { key: CUSTOM_ONLY, body: chat('auto') });
  t.equal(answered.status, 200);
  t.equal(answered.headers.get('x-modelgate-provider'), 'custom');
  t.equal(primary.requests.length, 0, 'the cheapest model (solo on openai) is not chosen');
  const unrestricted = await call(gateway.url, '/chat/completions', { body: chat('auto') });
  t.equal(unrestricted.headers.get('x-modelgate-provider'), 'openai', 'a key without a restriction gets the cheapest');
});

t.test('failover never tries a candidate outside the allowed set', async (t) => {
  primary.next(failing(500, 'openai/error-500.json'), failing(500, 'openai/error-500.json'));
  const failed = await call(gateway.url, '/chat/completions', { key: PINNED, body: chat('duo', { modelgate: { failover: { fallback_models: ['custom/duo', 'other'] } } }) });
  t.equal(failed.status, 503, "the allowed provider's failure is the answer");
  t.equal(failed.json.error.code, 'provider_unavailable');
  t.equal(primary.requests.length, 2, 'tried and retried on openai');
  t.equal(secondary.requests.length, 0, 'custom is never tried');

  primary.reset();
  primary.next(failing(500, 'openai/error-500.json'), failing(500, 'openai/error-500.json'));
  const failedOver = await call(gateway.url, '/chat/completions', { key: BY_NAME, body: chat('duo') });
  t.equal(failedOver.status, 200, 'a key allowed `duo` on any provider fails over to the other');
  t.equal(failedOver.headers.get('x-modelgate-provider'), 'custom');
});

t.test('GET /v1/models lists only what the key may use', async (t) => {
  const listed = await call(gateway.url, '/models', { key: CUSTOM_ONLY });
  t.same(
    listed.json.data.map((model: { id: string }) => model.id),
    ['auto', 'custom/duo', 'other'],
  );
  t.equal((await call(gateway.url, '/models/solo', { key: CUSTOM_ONLY })).status, 404, 'a model it may not use is not found');
  t.equal((await call(gateway.url, '/models/other', { key: CUSTOM_ONLY })).status, 200);
  const all = await call(gateway.url, '/models');
  const ids = all.json.data.map((model: { id: string }) => model.id);
  t.ok(ids.includes('solo') && ids.includes('openai/duo') && ids.length > 5, 'the admin key sees every model of the catalog');
});

t.end();
