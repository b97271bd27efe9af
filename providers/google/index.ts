// Google Gemini API: POST {GOOGLE_BASE_URL}/v1beta/models/{model}:generateContent, or
// :streamGenerateContent?alt=sse for streams and :batchEmbedContents for embeddings, with
// `x-goog-api-key` (and `x-goog-user-project` when a project is set). What is mapped, dropped or refused is in docs/providers/google.md; the
// translators live beside this file. Reads GOOGLE_API_KEY, GOOGLE_PROJECT_ID, GOOGLE_BASE_URL.
import { defineSettings, type SettingsOf } from '../../core/settings.js';
import type { ProviderModule, UpstreamRequest } from '../../core/provider.js';
import { toGenerateContentRequest } from './request.js';
import { toCompletion } from './response.js';
import { GeminiStream } from './stream.js';
import { googleError } from './errors.js';
import { batchEmbedBody, geminiEmbeddings } from './embeddings.js';

const settings = defineSettings({
  GOOGLE_API_KEY: { type: 'string', secret: true, description: 'Gemini API key, sent as x-goog-api-key. Without it the google provider is not configured.' },
  GOOGLE_PROJECT_ID: { type: 'string', secret: true, description: 'Google Cloud project billed for the calls, sent as x-goog-user-project when set.' },
  GOOGLE_BASE_URL: {
    type: 'string',
    default: 'https://generativelanguage.googleapis.com',
    pattern: '^https?://',
    hint: 'be an http(s) URL',
    description: 'Gemini API base URL without the version path (the adapter appends /v1beta/models/...): a regional endpoint or an egress proxy.',
  },
});

export const google: ProviderModule<typeof settings> = {
  name: 'google',
  configuredBy: 'GOOGLE_API_KEY',
  settings,
  create(values) {
    const s = values as SettingsOf<typeof settings>;
    const base = s.GOOGLE_BASE_URL.replace(/\/+$/, '');
    const headers = (accept: string): Record<string, string> => ({
      'content-type': 'application/json',
      accept,
      ...(s.GOOGLE_API_KEY ? { 'x-goog-api-key': s.GOOGLE_API_KEY } : {}),
      ...(s.GOOGLE_PROJECT_ID ? { 'x-goog-user-project': s.GOOGLE_PROJECT_ID } : {}),
    });
    return {
      name: 'google',
      configured: s.GOOGLE_API_KEY !== undefined,
      baseUrl: base,
      chatRequest(request, context): UpstreamRequest {
        const model = encodeURIComponent(context.model.native_id.replace(/^models\//, ''));
        const method = context.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
        return {
          url: `${base}/v1beta/models/${model}:${method}`,
          method: 'POST',
          headers: headers(context.stream ? 'text/event-stream' : 'application/json'),
          body: JSON.stringify(toGenerateContentRequest(request, context.model)),
        };
      },
      chatResponse: toCompletion,
      streamTranslator: (context) => new GeminiStream(context),
      embeddingsRequest(request, context): UpstreamRequest {
        const model = encodeURIComponent(context.model.native_id.replace(/^models\//, ''));
        return {
          url: `${base}/v1beta/models/${model}:batchEmbedContents`,
          method: 'POST',
          headers: headers('application/json'),
          body: JSON.stringify(batchEmbedBody(request, context)),
        };
      },
      embeddingsResponse: geminiEmbeddings,
      error: googleError,
      testRequest(): UpstreamRequest {
        // The model list proves the key and the endpoint without spending tokens.
        return { url: `${base}/v1beta/models?pageSize=1`, method: 'GET', headers: headers('application/json') };
      },
    };
  },
};
