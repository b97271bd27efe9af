// One rule on every native adapter: what only OpenAI can add to an answer (log probabilities, token
// biases, audio output) is refused with a 400 naming the parameter, never silently dropped; the
// OpenAI defaults of those fields pass (providers/shared/openai-request.ts refuseOpenAIOnly).
import t from 'tap';
import { loadCatalog } from '../../core/catalog.js';
import type { ChatRequest } from '../../core/chat-types.js';
import { anthropic } from '../../providers/anthropic/index.js';
import { google } from '../../providers/google/index.js';
import { cohere } from '../../providers/cohere/index.js';
import { mistral } from '../../providers/mistral/index.js';
import { rejection } from '../helpers/rejection.js';

const catalog = loadCatalog();
const adapters = [
  [anthropic.create({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_VERSION: '2023-06-01', ANTHROPIC_BASE_URL: 'https://api.anthropic.com' }), catalog.get('anthropic', 'claude-sonnet-4-5')!],
  [google.create({ GOOGLE_API_KEY: 'k', GOOGLE_BASE_URL: 'https://generativelanguage.googleapis.com' }), catalog.get('google', 'gemini-2.5-flash')!],
  [cohere.create({ COHERE_API_KEY: 'k', COHERE_BASE_URL: 'https://api.cohere.com' }), catalog.get('cohere', 'command-a-03-2025')!],
  [mistral.create({ MISTRAL_API_KEY: 'k', MISTRAL_BASE_URL: 'https://api.mistral.ai' }), catalog.get('mistral', 'mistral-small-latest')!],
] as const;

const OPENAI_ONLY: Array<[Partial<ChatRequest>, string]> = [
  [{ logprobs: true }, 'logprobs'],
  [{ top_logprobs: 2 }, 'top_logprobs'],
  [{ logit_bias: { '42': 10 } }, 'logit_bias'],
  [{ audio: { voice: 'alloy', format: 'mp3' } }, 'audio'],
  [{ modalities: ['text', 'audio'] }, 'modalities'],
];

for (const [provider, model] of adapters) {
  const translate = (change: Partial<ChatRequest>) => () =>
    provider.chatRequest({ model: model.id, messages: [{ role: 'user', content: 'Hi' }], ...change }, { model, stream: false, requestId: 'req-1' });

  t.test(`${provider.name} refuses OpenAI-only output features with 400, and takes their defaults`, async (t) => {
    for (const [change, param] of OPENAI_ONLY) {
      t.match(rejection(translate(change)), { status: 400, param, message: new RegExp(`^The ${provider.name} provider`) }, param);
    }
    t.notOk(rejection(translate({ logprobs: false, logit_bias: {}, modalities: ['text'] })), 'the OpenAI defaults are fine');
  });
}
