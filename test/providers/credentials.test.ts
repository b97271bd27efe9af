// Every adapter words a refused gateway key alike (core/upstream-error.ts credentialsRejected): 502,
// not retried, `provider_auth_error`, the status and the settings to check, with the provider's own
// text only where it cannot quote the key — from an HTTP status or from an error inside a stream.
import t from 'tap';
import { anthropic } from '../../providers/anthropic/index.js';
import { google } from '../../providers/google/index.js';
import { cohere } from '../../providers/cohere/index.js';
import { mistral } from '../../providers/mistral/index.js';
import { openai } from '../../providers/openai/index.js';
import { custom } from '../../providers/custom/index.js';
import { loadCatalog } from '../../core/catalog.js';
import { fixture } from '../helpers/fake-provider.js';
import { replayUntilError } from '../helpers/replay.js';

const providers = {
  openai: openai.create({ OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'https://api.openai.com/v1' }),
  custom: custom.create({ CUSTOM_BASE_URL: 'http://localhost:8000/v1', CUSTOM_MODELS: [] }),
  anthropic: anthropic.create({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_VERSION: '2023-06-01', ANTHROPIC_BASE_URL: 'https://api.anthropic.com' }),
  google: google.create({ GOOGLE_API_KEY: 'k', GOOGLE_BASE_URL: 'https://generativelanguage.googleapis.com' }),
  cohere: cohere.create({ COHERE_API_KEY: 'k', COHERE_BASE_URL: 'https://api.cohere.com' }),
  mistral: mistral.create({ MISTRAL_API_KEY: 'k', MISTRAL_BASE_URL: 'https://api.mistral.ai' }),
};
const refused = { status: 502, retryable: false, type: 'server_error', code: 'provider_auth_error' };

t.test('a refused key answered with an HTTP status', async (t) => {
  const cases: Array<[keyof typeof providers, number, string, string]> = [
    ['openai', 401, fixture('openai/error-401.json'), "The openai provider rejected the gateway's credentials (HTTP 401); check OPENAI_API_KEY"],
    ['custom', 403, '{"detail":"Forbidden"}', "The custom provider rejected the gateway's credentials (HTTP 403); check CUSTOM_API_KEY"],
    ['anthropic', 401, fixture('anthropic/error-401.json'), "The anthropic provider rejected the gateway's credentials (HTTP 401: invalid x-api-key); check ANTHROPIC_API_KEY"],
    [
      'google',
      400,
      fixture('gemini/error-400-invalid-api-key.json'),
      "The google provider rejected the gateway's credentials (HTTP 400 INVALID_ARGUMENT API_KEY_INVALID: API key not valid. Please pass a valid API key.); check GOOGLE_API_KEY and GOOGLE_PROJECT_ID",
    ],
    ['cohere', 498, fixture('cohere/error-401.json'), "The cohere provider rejected the gateway's credentials (HTTP 498: invalid api token); check COHERE_API_KEY"],
    ['mistral', 401, fixture('mistral/error-401.json'), "The mistral provider rejected the gateway's credentials (HTTP 401); check MISTRAL_API_KEY"],
  ];
  for (const [name, status, body, message] of cases) {
    t.match(providers[name].error(status, {}, body), { ...refused, provider: name, reason: 'http_status', upstreamStatus: status, message }, name);
  }
});

t.test('a refused key reported inside a 200 stream', async (t) => {
  const catalog = loadCatalog();
  const context = (provider: string, model: string) => ({ model: catalog.get(provider, model)!, stream: true, requestId: 'req-1' });
  const anthropicEvent = 'event: error\ndata: {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}\n\n';
  const { error: fromAnthropic } = replayUntilError(providers.anthropic.streamTranslator(context('anthropic', 'claude-sonnet-4-5')), anthropicEvent);
  t.match(fromAnthropic, { ...refused, reason: 'stream_error', upstreamStatus: 200, message: "The anthropic provider rejected the gateway's credentials (HTTP 401: invalid x-api-key); check ANTHROPIC_API_KEY" });
  const googleEvent = 'data: {"error":{"code":403,"message":"denied","status":"PERMISSION_DENIED"}}\r\n\r\n';
  const { error: fromGoogle } = replayUntilError(providers.google.streamTranslator(context('google', 'gemini-2.5-flash')), googleEvent);
  t.match(fromGoogle, { ...refused, reason: 'stream_error', upstreamStatus: 200, message: "The google provider rejected the gateway's credentials (HTTP 403 PERMISSION_DENIED: denied); check GOOGLE_API_KEY and GOOGLE_PROJECT_ID" });
});
