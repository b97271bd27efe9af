// Mistral chat completions (POST {MISTRAL_BASE_URL}/v1/chat/completions, Bearer MISTRAL_API_KEY) and
// embeddings (POST /v1/embeddings): the settings and the upstream requests; request, response,
// stream, embeddings and error translation live beside this file. Rules and sources: docs/providers/mistral.md.
import { defineSettings, type SettingsOf } from '../../core/settings.js';

import type { Provider, ProviderModule } from '../../core/provider.js';
import { mistralBody } from './request.js';
import { mistralCompletion } from './response.js';
import { MistralStream } from './stream.js';
import { mistralError } from './errors.js';
import { mistralEmbeddings, mistralEmbeddingsBody } from './embeddings.js';

const settings = defineSettings({
  MISTRAL_API_KEY: { type: 'string', secret: true, description: 'Mistral API key, sent as a Bearer token. Without it the mistral provider is not configured.' },
  MISTRAL_BASE_URL: {
    type: 'string',
    default: 'https://api.mistral.ai',
    pattern: '^https?://',
    hint: 'be an http(s) URL',
    description: 'Mistral API base URL without a version path (the adapter appends /v1/chat/completions): a regional endpoint or an egress proxy.',
  },
});

export const mistral: ProviderModule<typeof settings> = {
  name: 'mistral',
  configuredBy: 'MISTRAL_API_KEY',
  settings,
  create(values): Provider {
    const s = values as SettingsOf<typeof settings>;
    const base = s.MISTRAL_BASE_URL.replace(/\/+$/, '');
    const headers = (accept: string): Record<string, string> => ({
      'content-type': 'application/json',
      accept,
      ...(s.MISTRAL_API_KEY ? { authorization: `Bearer ${s.MISTRAL_API_KEY}` } : {}),
    });
    return {
      name: 'mistral',
      configured: s.MISTRAL_API_KEY !== undefined,
      baseUrl: base,
      chatRequest: (request, context) => ({
        url: `${base}/v1/chat/completions`,
        method: 'POST',
        headers: headers(context.stream ? 'text/event-stream' : 'application/json'),
        body: JSON.stringify(mistralBody(request, context)),
      }),
      chatResponse: mistralCompletion,
      streamTranslator: (context) => new MistralStream(context),
      embeddingsRequest: (request, context) => ({
        url: `${base}/v1/embeddings`,
        method: 'POST',
        headers: headers('application/json'),
        body: JSON.stringify(mistralEmbeddingsBody(request, context)),
      }),
      embeddingsResponse: mistralEmbeddings,
      error: mistralError,
      testRequest: () => ({ url: `${base}/v1/models`, method: 'GET', headers: headers('application/json') }),
    };
  },
};
