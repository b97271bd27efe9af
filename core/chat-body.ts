// The core step that turns a chat-completion request body into ctx.chat: read with the size limit,
// parse, validate, and take the gateway's own `modelgate` field off the body so no provider sees it.
// It runs after the IP filter and auth, so unauthenticated clients cannot make us parse bodies.
import { readRequestBody } from './body.js';
import { validateChatRequest } from './chat-request.js';
import { GatewayError } from './errors.js';
import type { Next, PluginModule } from './pipeline.js';
import { estimatePromptTokens, promptTokensUpperBound } from './tokens.js';
import { defineSettings, type SettingsOf } from './settings.js';
import type { RequestContext } from './context.js';

const settings = defineSettings({
  MODELGATE_DEFAULT_OUTPUT_TOKENS: {
    type: 'integer',
    default: 256,
    minimum: 1,
    description:
      'Output tokens assumed for cost estimates (routing, per-request cap, budget reservation) when the request sets neither max_tokens nor max_completion_tokens. The bill always uses the reported usage.',
  },
  MODELGATE_MAX_BODY_SIZE: {
    type: 'number',
    default: 20,
    exclusiveMinimum: 0,
    description: 'Largest accepted request body, in MB (fractions allowed). Larger bodies get 413.',
  },
  MODELGATE_BODY_IDLE_TIMEOUT: {
    type: 'integer',
    default: 10000,
    minimum: 100,
    description: 'ms a chat request body may pause between two of its chunks; a body that stalls longer gets 408 and its connection closes. MODELGATE_REQUEST_TIMEOUT bounds the whole request.',
  },
});

export const chatBody: PluginModule<typeof settings> = {
  name: 'chat-body',
  settings,
  create(values, deps) {
    const s = values as SettingsOf<typeof settings>;
    const limits = { maxBytes: Math.floor(s.MODELGATE_MAX_BODY_SIZE * 1024 * 1024), idleMs: s.MODELGATE_BODY_IDLE_TIMEOUT };
    const defaultOutputTokens = s.MODELGATE_DEFAULT_OUTPUT_TOKENS;
    return { name: 'chat-body', step: { name: 'chat-body', scope: 'chat', handle } };

    async function handle(ctx: RequestContext, next: Next): Promise<void> {
      const raw = await readRequestBody(ctx.req, limits);
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw.toString('utf8'));
      } catch (error) {
        throw new GatewayError('invalid_json', { message: `Request body is not valid JSON: ${(error as Error).message}` });
      }
      const body = validateChatRequest(parsed);
      const overrides = deps.parseOverrides(body.modelgate, ctx.headers);
      delete body.modelgate;
      const stream = body.stream === true;
      const limit = body.max_completion_tokens ?? body.max_tokens ?? undefined;
      let promptTokens: number | undefined;
      ctx.chat = {
        body,
        overrides,
        stream,
        includeUsage: stream && body.stream_options?.include_usage === true,
        maxOutputTokens: limit,
        expectedOutputTokens: limit ?? defaultOutputTokens,
        get promptTokens() {
          return (promptTokens ??= estimatePromptTokens(body));
        },
        promptTokensUpperBound: promptTokensUpperBound(body, raw.length),
      };
      return next();
    }
  },
};
