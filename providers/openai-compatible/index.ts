// The OpenAI Chat Completions wire format, shared by the `openai` adapter and by `custom` (any
// OpenAI-compatible server). Requests pass through with the gateway's rules applied; streams are
// always asked for usage; responses and chunks are checked for the shape the protocol promises,
// and what compatible servers send differently (providers.md §0) is brought back to OpenAI's shape:
// finish reasons outside the enum, tool calls without index or type (or `null`), usage on the
// finish chunk. Embeddings (embeddings.ts) pass through the same way, float vectors always asked for.
// Every other field passes through.
import type { IncomingHttpHeaders } from 'node:http';
import type { ChatCompletion, ChatRequest } from '../../core/chat-types.js';
import type { EmbeddingsRequest } from '../../core/embeddings-types.js';
import type { UpstreamError } from '../../core/upstream-error.js';
import type { Provider, StreamTranslator, TranslateContext, UpstreamRequest } from '../../core/provider.js';
import { compatibleBody } from './request.js';
import { compatibleCompletion } from './response.js';
import { OpenAICompatibleStream } from './stream.js';
import { openAIError } from './errors.js';
import { ResponsesStreamTranslator, responsesBody, responsesCompletion, responsesRequest } from './responses.js';
import type { InputItem, ResponsesRequest } from '../../core/responses/types.js';
import { compatibleEmbeddings, compatibleEmbeddingsBody } from './embeddings.js';

export interface OpenAICompatibleOptions {
  name: string;
  baseUrl: string;
  apiKey: string | undefined;
  /** The setting that holds the key, named when the provider rejects it. */
  keySetting: string;
  configured: boolean;
  extraHeaders?: Record<string, string>;
  /**
   * Reasoning models (catalog capability) reject `max_tokens` and non-default sampling: the
   * request is rewritten to `max_completion_tokens` and temperature/top_p are dropped.
   */
  reasoningRules: boolean;
  acceptsUnlistedModels?: boolean;
  /** The server has OpenAI's Responses endpoint (OpenAI itself): POST /v1/responses requests go there. */
  responsesApi?: boolean;
  /**
   * Its answers may reach clients as the bytes it sent when they need no change (receivedAsIs), and
   * its stream chunks as their events' text (core/chunk-text.ts). The trust is in whatever answers
   * at the provider's base URL (OPENAI_BASE_URL: an egress proxy there is trusted the same way).
   * OpenAI's own serializer writes each key once and numbers JavaScript reads as written; a server
   * we do not know might send JSON a client reads differently from the gateway (a key twice: the
   * gateway bills the last, a client may read the first), so its answers are serialized again.
   */
  answersAsSent?: boolean;
}

export function createOpenAICompatible(options: OpenAICompatibleOptions): Provider {
  const base = options.baseUrl.replace(/\/+$/, '');
  const headers = (accept: string): Record<string, string> => ({
    'content-type': 'application/json',
    accept,
    ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
    ...options.extraHeaders,
  });

  return {
    name: options.name,
    configured: options.configured,
    baseUrl: base,
    acceptsUnlistedModels: options.acceptsUnlistedModels ?? false,

    chatRequest(request: ChatRequest, context: TranslateContext): UpstreamRequest {
      const body = compatibleBody(request, context, options.reasoningRules);
      return {
        url: `${base}/chat/completions`,
        method: 'POST',
        headers: headers(context.stream ? 'text/event-stream' : 'application/json'),
        body: JSON.stringify(body),
      };
    },

    chatResponse(body: unknown): ChatCompletion {
      return compatibleCompletion(options.name, body, options.answersAsSent ?? false);
    },

    streamTranslator(): StreamTranslator {
      return new OpenAICompatibleStream(options.name, options.answersAsSent ?? false);
    },

    ...(options.responsesApi
      ? {
          responsesRequest: (request: ResponsesRequest, history: readonly InputItem[], context: TranslateContext) =>
            responsesRequest(base, headers, responsesBody(request, history, context, options.reasoningRules), context.stream),
          responsesResponse: (body: unknown) => responsesCompletion(options.name, body),
          responsesStreamTranslator: () => new ResponsesStreamTranslator(options.name),
        }
      : {}),

    embeddingsRequest(request: EmbeddingsRequest, context: TranslateContext): UpstreamRequest {
      return {
        url: `${base}/embeddings`,
        method: 'POST',
        headers: headers('application/json'),
        body: JSON.stringify(compatibleEmbeddingsBody(request, context)),
      };
    },

    embeddingsResponse: (body, context) => compatibleEmbeddings(options.name, body, context),

    error(status: number, responseHeaders: IncomingHttpHeaders, text: string): UpstreamError {
      return openAIError(options.name, status, responseHeaders, text, options.keySetting);
    },

    testRequest(): UpstreamRequest {
      return { url: `${base}/models`, method: 'GET', headers: headers('application/json') };
    },
  };
}
