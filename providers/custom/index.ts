// Any OpenAI-compatible server (vLLM, Ollama, LM Studio, a company proxy) at CUSTOM_BASE_URL.
// Configured when the base URL is set; the key is optional because local servers often take none.
// Its models are whatever it serves: listed in CUSTOM_MODELS, or addressed as `custom/<model>`.
import { defineSettings, type SettingsOf } from '../../core/settings.js';
import { createOpenAICompatible } from '../openai-compatible/index.js';
import type { ProviderModule } from '../../core/provider.js';

const settings = defineSettings({
  CUSTOM_API_KEY: { type: 'string', secret: true, description: 'Bearer key for the custom provider, if it needs one.' },
  CUSTOM_BASE_URL: {
    type: 'string',
    pattern: '^https?://',
    hint: 'be an http(s) URL',
    description: 'Base URL of an OpenAI-compatible server, including its version path (e.g. http://localhost:11434/v1). Setting it configures the custom provider.',
  },
  CUSTOM_MODELS: {
    type: 'array',
    default: [],
    description: 'Model ids the custom server serves, added to the catalog (unpriced unless MODELGATE_MODEL_CATALOG prices them).',
  },
});

export const custom: ProviderModule<typeof settings> = {
  name: 'custom',
  configuredBy: 'CUSTOM_BASE_URL',
  settings,
  create(values) {
    const s = values as SettingsOf<typeof settings>;
    return createOpenAICompatible({
      name: 'custom',
      baseUrl: s.CUSTOM_BASE_URL ?? 'http://localhost',
      apiKey: s.CUSTOM_API_KEY,
      keySetting: 'CUSTOM_API_KEY',
      configured: s.CUSTOM_BASE_URL !== undefined,
      reasoningRules: false,
      acceptsUnlistedModels: true,
    });
  },
  extraModels(values) {
    return [...(values as SettingsOf<typeof settings>).CUSTOM_MODELS];
  },
};
