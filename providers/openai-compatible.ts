// The OpenAI Chat Completions wire format, shared by the `openai` adapter and by `custom` (any
// OpenAI-compatible server). Requests pass through with the gateway's rules applied; streams are
// always asked for usage; responses and chunks are checked for the shape the protocol promises.
import type { IncomingHttpHeaders } from 'node:http';
import type { ChatChunk, ChatCompletion, ChatRequest, Usage } from '../core/chat-types.js';
import type { SseEvent } from '../core/sse.js';
import { UpstreamError, parseRetryAfter, statusPolicy, badResponse } from '../core/upstream-error.js';
import type { Provider, StreamTranslator, TranslateContext, UpstreamRequest } from './types.js';
import { isObject } from './json-object.js';
import { eventPayload } from './native-response.js';

export interface OpenAICompatibleOptions {
  name: string;
  baseUrl: string;
  apiKey: string | undefined;
  configured: boolean;
  extraHeaders?: Record<string, string>;
  /**
   * Reasoning models (catalog capability) reject `max_tokens` and non-default sampling: the
   * request is rewritten to `max_completion_tokens` and temperature/top_p are dropped.
   */
  reasoningRules: boolean;
  acceptsUnlistedModels?: boolean;
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
      const body: ChatRequest = { ...request, model: context.model.native_id };
      if (context.stream) {
        body.stream = true;
        body.stream_options = { ...request.stream_options, include_usage: true };
      } else {
        delete body.stream_options;
      }
      if (options.reasoningRules && context.model.capabilities.reasoning) {
        if (body.max_tokens != null && body.max_completion_tokens == null) body.max_completion_tokens = body.max_tokens;
        delete body.max_tokens;
        delete body.temperature;
        delete body.top_p;
      }
      return {
        url: `${base}/chat/completions`,
        method: 'POST',
        headers: headers(context.stream ? 'text/event-stream' : 'application/json'),
        body: JSON.stringify(body),
      };
    },

    chatResponse(body: unknown): ChatCompletion {
      const completion = body as ChatCompletion;
      if (!isObject(body) || !Array.isArray(completion.choices) || completion.choices.some((c) => !isObject(c) || !isObject(c.message))) {
        throw badResponse(options.name, 'response has no choices[].message');
      }
      for (const choice of completion.choices) {
        choice.logprobs ??= null;
        choice.message.refusal ??= null;
        if (choice.message.content === undefined) choice.message.content = null;
      }
      completion.object = 'chat.completion';
      return completion;
    },

    streamTranslator(): StreamTranslator {
      return new OpenAIStream(options.name);
    },

    error(status: number, responseHeaders: IncomingHttpHeaders, text: string): UpstreamError {
      return openAIError(options.name, status, responseHeaders, text);
    },

    testRequest(): UpstreamRequest {
      return { url: `${base}/models`, method: 'GET', headers: headers('application/json') };
    },
  };
}

class OpenAIStream implements StreamTranslator {
  usage: Usage | undefined;
  finished = false;
  private finishReasonSeen = false;

  constructor(private readonly provider: string) {}

  event(event: SseEvent): ChatChunk[] {
    if (event.data === '[DONE]') {
      this.finished = true;
      return [];
    }
    const chunk = eventPayload(this.provider, event) as ChatChunk & { error?: unknown };
    if (event.event === 'error' || 'error' in chunk) throw streamError(this.provider, chunk.error);
    if (!Array.isArray(chunk.choices)) throw badResponse(this.provider, 'stream chunk has no choices');
    if (chunk.usage) this.usage = chunk.usage;
    if (chunk.choices.some((choice) => choice.finish_reason)) this.finishReasonSeen = true;
    chunk.object = 'chat.completion.chunk';
    return [chunk];
  }

  end(): ChatChunk[] {
    // Some compatible servers end after the finish chunk without [DONE].
    if (this.finishReasonSeen) this.finished = true;
    return [];
  }
}

function streamError(provider: string, error: unknown): UpstreamError {
  const body = isObject(error) ? error : {};
  const type = typeof body.type === 'string' ? body.type : 'server_error';
  const overloaded = /overload|unavailable|server_error|rate_limit/i.test(`${type} ${String(body.code ?? '')}`);
  return new UpstreamError({
    provider,
    reason: 'stream_error',
    upstreamStatus: 200,
    retryable: overloaded,
    status: 502,
    message: typeof body.message === 'string' ? body.message : `The ${provider} provider reported an error in the stream`,
    type,
    code: typeof body.code === 'string' ? body.code : null,
  });
}

/** OpenAI's error body `{"error":{message,type,param,code}}` through the common status policy. */
export function openAIError(provider: string, status: number, headers: IncomingHttpHeaders, text: string): UpstreamError {
  let parsed: { message?: unknown; type?: unknown; code?: unknown; param?: unknown } = {};
  try {
    const body = JSON.parse(text);
    if (isObject(body) && isObject(body.error)) parsed = body.error;
    else if (isObject(body)) parsed = body; // compatible servers: {"message": ...} or {"detail": ...}
  } catch {
    // not JSON: keep the status
  }
  const policy = statusPolicy(status);
  const upstreamMessage = typeof parsed.message === 'string' ? parsed.message : typeof (parsed as { detail?: unknown }).detail === 'string' ? String((parsed as { detail?: unknown }).detail) : undefined;
  const auth = status === 401 || status === 403;
  return new UpstreamError({
    provider,
    reason: 'http_status',
    upstreamStatus: status,
    retryable: policy.retryable,
    retryAfterMs: parseRetryAfter(headers),
    status: policy.status,
    message: auth
      ? `The ${provider} provider rejected the gateway's credentials (HTTP ${status}); check its API key`
      : (upstreamMessage ?? `The ${provider} provider answered HTTP ${status}`),
    type: auth ? 'server_error' : typeof parsed.type === 'string' ? parsed.type : undefined,
    code: auth ? 'provider_auth_error' : typeof parsed.code === 'string' ? parsed.code : null,
    param: typeof parsed.param === 'string' ? parsed.param : null,
  });
}
