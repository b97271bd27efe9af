// Cohere v2 chat (POST {COHERE_BASE_URL}/v2/chat, Bearer COHERE_API_KEY) and embed (POST /v2/embed):
// the settings and the upstream requests; request, response, stream, embeddings and error
// translation live beside this file.
// Rules and sources: docs/providers/cohere.md.
import { defineSettings, type SettingsOf } from '../../core/settings.js';
import type { Provider, ProviderModule } from '../../core/provider.js';
import { cohereBody } from './request.js';
import { cohereCompletion } from './response.js';
import { CohereStream } from './stream.js';
import { cohereError } from './errors.js';
import { cohereEmbedBody, cohereEmbeddings } from './embeddings.js';

const settings = defineSettings({
  COHERE_API_KEY: { type: 'string', secret: true, description: 'Cohere API key, sent as a Bearer token. Without it the cohere provider is not configured.' },
  COHERE_BASE_URL: {
    type: 'string',
    default: 'https://api.cohere.com',
    pattern: '^https?://',
    hint: 'be an http(s) URL',
    description: 'Cohere API base URL without a version path (the adapter appends /v2/chat): a regional endpoint or an egress proxy.',
  },
});

export const cohere: ProviderModule<typeof settings> = {
  name: 'cohere',
  configuredBy: 'COHERE_API_KEY',
  settings,
  create(values): Provider {
    const s = values as SettingsOf<typeof settings>;
    const base = s.COHERE_BASE_URL.replace(/\/+$/, '');
    const headers = (accept: string): Record<string, string> => ({
      'content-type': 'application/json',
      accept,
      ...(s.COHERE_API_KEY ? { authorization: `Bearer ${s.COHERE_API_KEY}` } : {}),
    });
    return {
      name: 'cohere',
      configured: s.COHERE_API_KEY !== undefined,
      baseUrl: base,
      chatRequest: (request, context) => ({
        url: `${base}/v2/chat`,
        method: 'POST',
        headers: headers(context.stream ? 'text/event-stream' : 'application/json'),
        body: JSON.stringify(cohereBody(request, context)),
      }),
      chatResponse: cohereCompletion,
      streamTranslator: (context) => new CohereStream(context),
      embeddingsRequest: (request, context) => ({
        url: `${base}/v2/embed`,
        method: 'POST',
        headers: headers('application/json'),
        body: JSON.stringify(cohereEmbedBody(request, context)),
      }),
      embeddingsResponse: cohereEmbeddings,
      error: cohereError,
      // The model list (GET /v1/models) costs nothing and proves both the key and the endpoint.
      testRequest: () => ({ url: `${base}/v1/models?endpoint=chat&page_size=1`, method: 'GET', headers: headers('application/json') }),
    };
  },
};
