// The core step that turns a request body into ctx.chat: read with the size limit, parse, validate,
// and take the gateway's own `modelgate` field off the body so no provider sees it. A chat
// completion is read as it is; a Responses request (core/responses/request.ts) becomes the chat
// request it means, its previous_response_id's stored turns included; an embeddings request keeps
// its own shape beside a chat-shaped `body` that routing, limits and the cache read.
// It runs after the IP filter and auth, so unauthenticated clients cannot make us parse bodies.
import { readRequestBody } from './body.js';
import { fieldOf, validateChatRequest } from './chat-request.js';
import type { ChatRequest } from './chat-types.js';
import { textTooDeep, tooDeepPath } from './json-depth.js';
import { GatewayError } from './errors.js';
import { ConfigError } from './config.js';
import type { Next, PluginModule } from './pipeline.js';
import { countImages, estimatePromptTokens, promptTokensUpperBound } from './tokens.js';
import { defineSettings, type SettingsOf } from './settings.js';
import type { ChatState, RequestContext } from './context.js';
import { inputItems, readResponsesRequest, resolveReferences, toChatRequest } from './responses/request.js';
import { newId } from './responses/output.js';
import type { InputItem } from './responses/types.js';
import { embeddingTokens, readEmbeddingsRequest } from './embeddings-request.js';
import { inputsOf } from './embeddings-types.js';
import { EMBEDDINGS_PATH, RESPONSES_PATH } from './api-paths.js';

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
  MODELGATE_MAX_JSON_DEPTH: {
    type: 'integer',
    default: 64,
    minimum: 8,
    maximum: 1000,
    description:
      'Deepest nesting of arrays and objects accepted in a chat request body, counting the body itself as level 1 (so `tools[0].function.parameters` is level 5), and in a tool call\'s `arguments`. Deeper bodies get 400 `json_too_deep` naming the field. The default leaves room for the deepest JSON Schema providers accept (OpenAI: 10 levels of objects, about 25 levels of JSON); the maximum keeps the recursive JSON walks after parsing far from the stack\'s limit.',
  },
  MODELGATE_ANONYMIZE_UPSTREAM: {
    type: 'boolean',
    default: false,
    description:
      'Anonymize request bodies before they are routed, cached and forwarded, as records and logs are (with MODELGATE_ANONYMIZATION_ENABLED): the provider sees pseudonyms instead of the user field, named fields, e-mail addresses and phone numbers. Off: providers get the body as sent.',
  },
});

/**
 * Left as sent when a body is anonymized before forwarding (MODELGATE_ANONYMIZE_UPSTREAM): what
 * routes the request and defines or calls tools, not what users wrote. Tool-call `arguments` are
 * JSON text: a number taken for a phone number would make them invalid JSON.
 */
const TOP_KEPT = new Set(['model', 'modelgate', 'tools', 'functions', 'tool_choice', 'response_format', 'text', 'stream', 'stream_options', 'prediction', 'previous_response_id', 'reasoning', 'include', 'encoding_format', 'dimensions']);
const keptUpstream = (name: string, depth: number) => name === 'arguments' || (depth === 0 && TOP_KEPT.has(name));

/** ctx.route of the two other APIs whose bodies this step reads (the server names a route `METHOD path`). */
const RESPONSES_ROUTE = `POST ${RESPONSES_PATH}`;
const EMBEDDINGS_ROUTE = `POST ${EMBEDDINGS_PATH}`;

export const chatBody: PluginModule<typeof settings> = {
  name: 'chat-body',
  settings,
  create(values, deps) {
    const s = values as SettingsOf<typeof settings>;
    const limits = { maxBytes: Math.floor(s.MODELGATE_MAX_BODY_SIZE * 1024 * 1024), idleMs: s.MODELGATE_BODY_IDLE_TIMEOUT };
    const defaultOutputTokens = s.MODELGATE_DEFAULT_OUTPUT_TOKENS;
    const maxDepth = s.MODELGATE_MAX_JSON_DEPTH;
    const anonymizer = s.MODELGATE_ANONYMIZE_UPSTREAM && deps.anonymizer.enabled ? deps.anonymizer : undefined;
    // The anonymizer walks 64 levels: a deeper body it would cut, not forward whole.
    if (anonymizer && maxDepth > 64) throw new ConfigError(['MODELGATE_ANONYMIZE_UPSTREAM: needs MODELGATE_MAX_JSON_DEPTH of 64 or less (the anonymizer walks 64 levels of a body)']);
    return { name: 'chat-body', step: { name: 'chat-body', scope: 'chat', handle } };

    async function handle(ctx: RequestContext, next: Next): Promise<void> {
      const raw = await readRequestBody(ctx.req, limits);
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw.toString('utf8'));
      } catch (error) {
        throw new GatewayError('invalid_json', { message: `Request body is not valid JSON: ${(error as Error).message}` });
      }
      // Before anything walks the body (validation included): every later walk may recurse.
      const deep = tooDeepPath(parsed, maxDepth);
      if (deep) throw tooDeep(fieldOf(deep), maxDepth);
      const chat = ctx.route !== RESPONSES_ROUTE && ctx.route !== EMBEDDINGS_ROUTE;
      // A chat request is validated as sent (a pseudonym must not make `user: 123` valid).
      if (chat) parsed = validateChatRequest(parsed);
      let bytes = raw.length;
      if (anonymizer) {
        // Opt-in: what leaves for the provider (and what the cache keys on) carries pseudonyms too;
        // other requests run meanwhile (a 20 MB body takes about a second). Pseudonyms are longer
        // than what they replace: the size and every bound read from it are the new body's.
        parsed = await anonymizer.valueYielding(parsed, undefined, keptUpstream);
        bytes = Buffer.byteLength(JSON.stringify(parsed));
        if (bytes > limits.maxBytes) throw tooLarge('messages', `The body, anonymized before forwarding (MODELGATE_ANONYMIZE_UPSTREAM), is larger than the ${s.MODELGATE_MAX_BODY_SIZE} MB a request may be (MODELGATE_MAX_BODY_SIZE).`);
      }
      if (ctx.route === RESPONSES_ROUTE) ctx.chat = await responsesState(ctx, parsed, bytes);
      else if (ctx.route === EMBEDDINGS_ROUTE) ctx.chat = embeddingsState(ctx, parsed, bytes);
      else ctx.chat = chatState(ctx, parsed as ChatRequest, bytes, 'chat');
      return next();
    }

    /** The state every step reads, for a chat request (also the one a Responses request becomes). */
    function chatState(ctx: RequestContext, body: ChatRequest, bytes: number, api: ChatState['api'], overrides = deps.parseOverrides(body.modelgate, ctx.headers)): ChatState {
      checkToolArguments(body, maxDepth);
      delete body.modelgate;
      const stream = body.stream === true;
      const limit = body.max_completion_tokens ?? body.max_tokens ?? undefined;
      let promptTokens: number | undefined;
      return {
        api,
        body,
        overrides,
        stream,
        includeUsage: api === 'chat' && stream && body.stream_options?.include_usage === true,
        maxOutputTokens: limit,
        expectedOutputTokens: limit ?? defaultOutputTokens,
        get promptTokens() {
          return (promptTokens ??= estimatePromptTokens(body));
        },
        promptTokensUpperBound: promptTokensUpperBound(body, bytes),
        bodyBytes: bytes,
        images: countImages(body),
      };
    }

    async function responsesState(ctx: RequestContext, parsed: unknown, bytes: number): Promise<ChatState> {
      const request = readResponsesRequest(parsed);
      const overrides = deps.parseOverrides(request.modelgate, ctx.headers);
      delete request.modelgate;
      const keyId = ctx.principal?.keyId ?? '';
      // What references and a continued conversation stand for counts as if the client had sent it.
      bytes += await resolveReferences(request, (ids) => deps.responses.items(ids, keyId));
      if (bytes > limits.maxBytes) throw tooLarge('input', `The input with the items it references is larger than the ${s.MODELGATE_MAX_BODY_SIZE} MB a request may be (MODELGATE_MAX_BODY_SIZE).`);
      let history: InputItem[] = [];
      if (request.previous_response_id) {
        const previous = await deps.responses.get(request.previous_response_id, ctx.principal?.keyId ?? '');
        if (!previous) throw new GatewayError('response_not_found', { param: 'previous_response_id', message: `Previous response with id '${request.previous_response_id}' not found.` });
        history = previous.items;
        // A chain of continuations grows with every turn: the whole conversation is held to the body limit.
        bytes += Buffer.byteLength(JSON.stringify(history));
        if (bytes > limits.maxBytes) {
          throw tooLarge('previous_response_id', `The conversation continued from previous_response_id is larger than the ${s.MODELGATE_MAX_BODY_SIZE} MB a request may be (MODELGATE_MAX_BODY_SIZE): start a new one.`);
        }
      }
      const state = chatState(ctx, toChatRequest(request, history), bytes, 'responses', overrides);
      const frame = { id: newId('resp'), createdAt: Math.floor(Date.now() / 1000), request, model: request.model };
      const keep = request.store !== false;
      state.responses = {
        request,
        history,
        frame,
        settle(response) {
          if (!keep || !ctx.principal) return Promise.resolve();
          return deps.responses.save({
            id: response.id,
            keyId: ctx.principal.keyId,
            tenant: ctx.principal.tenant,
            createdAt: Date.now(),
            response,
            items: [...history, ...inputItems(request), ...response.output],
          });
        },
      };
      return state;
    }

    function embeddingsState(ctx: RequestContext, parsed: unknown, bytes: number): ChatState {
      const request = readEmbeddingsRequest(parsed);
      const overrides = deps.parseOverrides(request.modelgate, ctx.headers);
      delete request.modelgate;
      const tokens = embeddingTokens(request);
      return {
        api: 'embeddings',
        embeddings: { request, inputs: inputsOf(request).length, encoding: request.encoding_format === 'base64' ? 'base64' : 'float' },
        // What routing, limits and the cache read: the model, and the input as the one thing answered.
        // Every field but the encoding and the end-user id can change the vectors (a custom server's
        // own options included), so all of them are what the cache key covers.
        body: { ...withoutFields(request, ['encoding_format', 'user']), model: request.model, messages: [] },
        overrides,
        stream: false,
        includeUsage: false,
        maxOutputTokens: 0,
        expectedOutputTokens: 0,
        promptTokens: tokens,
        promptTokensUpperBound: Math.max(tokens, bytes),
        bodyBytes: bytes,
        images: 0,
      };
    }
  },
};

/** Tool call arguments are JSON in a string, parsed by the adapters of native APIs: measured too. */
function checkToolArguments(body: ChatRequest, maxDepth: number): void {
  body.messages.forEach((message, i) => {
    if (message.role !== 'assistant') return;
    message.tool_calls?.forEach((call, j) => {
      // The arguments object is level 1, as the body is.
      if (textTooDeep(call.function.arguments, maxDepth)) throw tooDeep(`messages[${i}].tool_calls[${j}].function.arguments`, maxDepth);
    });
  });
}

function withoutFields(record: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const copy = { ...record };
  for (const field of fields) delete copy[field];
  return copy;
}

function tooLarge(param: string, message: string): GatewayError {
  return new GatewayError('payload_too_large', { param, message });
}

function tooDeep(param: string, maxDepth: number): GatewayError {
  return new GatewayError('json_too_deep', {
    param,
    message: `'${param}' nests arrays and objects too deeply: the gateway accepts ${maxDepth} levels (MODELGATE_MAX_JSON_DEPTH).`,
  });
}
