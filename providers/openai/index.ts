// OpenAI Chat Completions: Bearer key, optional organization and project headers.
import { defineSettings, type SettingsOf } from '../../core/settings.js';
import { createOpenAICompatible } from '../openai-compatible/index.js';
import type { ProviderModule } from '../../core/provider.js';

const settings = defineSettings({
  OPENAI_API_KEY: { type: 'string', secret: true, variants: ['dev', 'staging', 'prod'], description: 'OpenAI API key. Without it the openai provider is not configured.' },
  OPENAI_ORGANIZATION: { type: 'string', secret: true, description: 'Sent as OpenAI-Organization.' },
  OPENAI_PROJECT: { type: 'string', secret: true, description: 'Sent as OpenAI-Project.' },
  OPENAI_BASE_URL: { type: 'string', default: 'https://api.openai.com/v1', pattern: '^https?://', hint: 'be an http(s) URL', description: 'OpenAI API base URL (a regional endpoint or an egress proxy).' },
});

export const openai: ProviderModule<typeof settings> = {
  name: 'openai',
  configuredBy: 'OPENAI_API_KEY',
  settings,
  create(values) {
    const s = values as SettingsOf<typeof settings>;
    return createOpenAICompatible({
      name: 'openai',
      baseUrl: s.OPENAI_BASE_URL,
      apiKey: s.OPENAI_API_KEY,
      keySetting: 'OPENAI_API_KEY',
      configured: s.OPENAI_API_KEY !== undefined,
      extraHeaders: {
        ...(s.OPENAI_ORGANIZATION ? { 'openai-organization': s.OPENAI_ORGANIZATION } : {}),
        ...(s.OPENAI_PROJECT ? { 'openai-project': s.OPENAI_PROJECT } : {}),
      },
      reasoningRules: true,
      responsesApi: true,
      answersAsSent: true,
    });
  },
};
