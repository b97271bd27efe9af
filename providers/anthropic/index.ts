// Anthropic Messages API: POST {ANTHROPIC_BASE_URL}/v1/messages with `x-api-key` and
// `anthropic-version`. What is mapped, dropped or refused is in docs/providers/anthropic.md; the
// translators live beside this file. Reads ANTHROPIC_API_KEY, ANTHROPIC_VERSION, ANTHROPIC_BASE_URL.
import { defineSettings, type SettingsOf } from '../../core/settings.js';
import type { ProviderModule, UpstreamRequest } from '../../core/provider.js';
import { toMessagesRequest } from './request.js';
import { toCompletion } from './response.js';
import { AnthropicStream } from './stream.js';
import { anthropicError } from './errors.js';

const settings = defineSettings({
  ANTHROPIC_API_KEY: { type: 'string', secret: true, description: 'Anthropic API key, sent as x-api-key. Without it the anthropic provider is not configured.' },
  ANTHROPIC_VERSION: { type: 'string', default: '2023-06-01', minLength: 1, description: 'Messages API version, sent as anthropic-version.' },
  ANTHROPIC_BASE_URL: {
    type: 'string',
    default: 'https://api.anthropic.com',
    pattern: '^https?://',
    hint: 'be an http(s) URL',
    description: 'Anthropic API base URL without the version path (the adapter appends /v1/messages): a regional endpoint or an egress proxy.',
  },
});

export const anthropic: ProviderModule<typeof settings> = {
  name: 'anthropic',
  configuredBy: 'ANTHROPIC_API_KEY',
  settings,
  create(values) {
    const s = values as SettingsOf<typeof settings>;
    const base = s.ANTHROPIC_BASE_URL.replace(/\/+$/, '');
    const headers = (accept: string): Record<string, string> => ({
      'content-type': 'application/json',
      accept,
      'anthropic-version': s.ANTHROPIC_VERSION,
      ...(s.ANTHROPIC_API_KEY ? { 'x-api-key': s.ANTHROPIC_API_KEY } : {}),
    });
    return {
      name: 'anthropic',
      configured: s.ANTHROPIC_API_KEY !== undefined,
      baseUrl: base,
      chatRequest(request, context): UpstreamRequest {
        return {
          url: `${base}/v1/messages`,
          method: 'POST',
          headers: headers(context.stream ? 'text/event-stream' : 'application/json'),
          body: JSON.stringify(toMessagesRequest(request, context.model, context.stream)),
        };
      },
      chatResponse: toCompletion,
      streamTranslator: (context) => new AnthropicStream(context),
      error: anthropicError,
      testRequest(): UpstreamRequest {
        // The model list proves the key and the endpoint without spending tokens.
        return { url: `${base}/v1/models?limit=1`, method: 'GET', headers: headers('application/json') };
      },
    };
  },
};
