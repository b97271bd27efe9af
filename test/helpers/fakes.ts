// Fake providers that speak each native protocol as shared/protocol documents it: paths, auth
// headers, bodies and SSE framing, replaying the golden fixtures. A request with the wrong
// credentials gets the provider's own 401 fixture.
import { FakeProvider, fixture, fixtureJson, json, sse, type Responder } from './fake-provider.js';

export const PROVIDER_KEYS = {
  openai: 'sk-test-openai-0123456789',
  custom: 'sk-test-custom-0123456789',
} as const;

/** OpenAI Chat Completions at /v1/chat/completions and /v1/models, Bearer auth. */
export function openAIResponder(key: string = PROVIDER_KEYS.openai): Responder {
  return (request, res) => {
    if (request.headers.authorization !== `Bearer ${key}`) return json(401, fixtureJson('openai/error-401.json'))(request, res);
    if (request.method === 'GET' && request.url === '/v1/models') return json(200, fixtureJson('openai/models.json'))(request, res);
    if (request.method !== 'POST' || request.url !== '/v1/chat/completions') return json(404, fixtureJson('openai/error-404.json'))(request, res);
    const tools = Array.isArray(request.json?.tools);
    if (request.json?.stream) return sse(fixture(tools ? 'openai/stream-tool-calls.sse' : 'openai/stream.sse'))(request, res);
    return json(200, fixtureJson(tools ? 'openai/chat-tool-calls.json' : 'openai/chat.json'))(request, res);
  };
}

export function startFakeOpenAI(key?: string): Promise<FakeProvider> {
  return FakeProvider.start(openAIResponder(key));
}
