// The OpenAI Chat Completions wire format, shared by the `openai` adapter and by `custom` (any
// OpenAI-compatible server). Requests pass through with the gateway's rules applied; streams are
// always asked for usage; responses and chunks are checked for the shape the protocol promises,
// and what compatible servers send differently (providers.md §0) is brought back to OpenAI's shape:
// finish reasons outside the enum, tool calls without index or type (or `null`), usage on the
// finish chunk.
// Every other field passes through.
import type { IncomingHttpHeaders } from 'node:http';
import type { ChatChunk, ChatCompletion, ChatRequest, ToolCall, Usage } from '../core/chat-types.js';
import type { SseEvent } from '../core/sse.js';
import { UpstreamError, parseRetryAfter, statusPolicy, badResponse, credentialsRejected, reportedFailure } from '../core/upstream-error.js';
import type { Provider, StreamTranslator, TranslateContext, UpstreamRequest } from './types.js';
import { isObject } from './json-object.js';
import { eventPayload } from './native-response.js';
import { ToolCallIndexer, compatibleFinishReason } from './compatible-divergences.js';

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
        choice.finish_reason = compatibleFinishReason(options.name, choice.finish_reason, false);
        choice.logprobs ??= null;
        choice.message.refusal ??= null;
        if (choice.message.content === undefined) choice.message.content = null;
        if (Array.isArray(choice.message.tool_calls)) choice.message.tool_calls = choice.message.tool_calls.map(withType);
        else if (choice.message.tool_calls === null) delete choice.message.tool_calls; // Mistral-style "no calls"; OpenAI's schema has none
      }
      completion.object = 'chat.completion';
      return completion;
    },

    streamTranslator(): StreamTranslator {
      return new OpenAIStream(options.name);
    },

    error(status: number, responseHeaders: IncomingHttpHeaders, text: string): UpstreamError {
      return openAIError(options.name, status, responseHeaders, text, options.keySetting);
    },

    testRequest(): UpstreamRequest {
      return { url: `${base}/models`, method: 'GET', headers: headers('application/json') };
    },
  };
}

/** A tool call as OpenAI sends it always has `type`; some compatible servers leave it out. */
function withType(call: ToolCall): ToolCall {
  return isObject(call) && call.type === undefined ? { ...call, type: 'function' } : call;
}

class OpenAIStream implements StreamTranslator {
  usage: Usage | undefined;
  finished = false;
  private finishReasonSeen = false;
  /** Usage that came on a chunk with choices (Mistral-style), owed as OpenAI's last, choice-less chunk. */
  private usageOwed = false;
  private last: ChatChunk | undefined;
  private readonly toolCalls: ToolCallIndexer;

  constructor(private readonly provider: string) {
    this.toolCalls = new ToolCallIndexer(provider);
  }

  event(event: SseEvent): ChatChunk[] {
    if (event.data === '[DONE]') {
      this.finished = true;
      return this.owedUsage();
    }
    const chunk = eventPayload(this.provider, event) as ChatChunk & { error?: unknown };
    if (event.event === 'error' || 'error' in chunk) throw streamError(this.provider, chunk.error);
    if (!Array.isArray(chunk.choices)) throw badResponse(this.provider, 'stream chunk has no choices');
    for (const choice of chunk.choices) {
      if (!isObject(choice)) throw badResponse(this.provider, 'stream choice is not an object');
      if (choice.finish_reason != null) {
        choice.finish_reason = compatibleFinishReason(this.provider, choice.finish_reason, true);
        this.finishReasonSeen = true;
      }
      const toolCalls: unknown = choice.delta?.tool_calls;
      if (Array.isArray(toolCalls)) choice.delta.tool_calls = toolCalls.map((call) => this.toolCalls.fragment(call));
    }
    if (chunk.usage) {
      this.usage = chunk.usage;
      this.usageOwed = chunk.choices.length > 0;
      if (this.usageOwed) delete chunk.usage;
    }
    chunk.object = 'chat.completion.chunk';
    this.last = chunk;
    return [chunk];
  }

  end(): ChatChunk[] {
    // Some compatible servers end after the finish chunk without [DONE].
    if (this.finishReasonSeen) this.finished = true;
    return this.finished ? this.owedUsage() : [];
  }

  private owedUsage(): ChatChunk[] {
    if (!this.usageOwed || !this.usage || !this.last) return [];
    this.usageOwed = false;
    const { id, created, model } = this.last;
    return [{ id, object: 'chat.completion.chunk', created, model, choices: [], usage: this.usage }];
  }
}

/** `{"error": {message, type, code}}` inside the stream; overloads and server errors are worth another try. */
function streamError(provider: string, error: unknown): UpstreamError {
  const body = isObject(error) ? error : {};
  const type = typeof body.type === 'string' ? body.type : undefined;
  return reportedFailure(provider, {
    detail: typeof body.message === 'string' ? body.message : undefined,
    type,
    code: typeof body.code === 'string' ? body.code : undefined,
    retryable: /overload|unavailable|server_error|rate_limit/i.test(`${type ?? 'server_error'} ${String(body.code ?? '')}`),
  });
}

/** OpenAI's error body `{"error":{message,type,param,code}}` through the common status policy. */
export function openAIError(provider: string, status: number, headers: IncomingHttpHeaders, text: string, keySetting: string): UpstreamError {
  let parsed: { message?: unknown; type?: unknown; code?: unknown; param?: unknown } = {};
  try {
    const body = JSON.parse(text);
    if (isObject(body) && isObject(body.error)) parsed = body.error;
    else if (isObject(body)) parsed = body; // compatible servers: {"message": ...} or {"detail": ...}
  } catch {
    // not JSON: keep the status
  }
  const retryAfterMs = parseRetryAfter(headers);
  // OpenAI's 401 message quotes part of the key: only the status reaches the client.
  if (status === 401 || status === 403) return credentialsRejected(provider, { status, settings: keySetting, retryAfterMs });
  const policy = statusPolicy(status);
  const upstreamMessage = typeof parsed.message === 'string' ? parsed.message : typeof (parsed as { detail?: unknown }).detail === 'string' ? String((parsed as { detail?: unknown }).detail) : undefined;
  return new UpstreamError({
    provider,
    reason: 'http_status',
    upstreamStatus: status,
    retryable: policy.retryable,
    retryAfterMs,
    status: policy.status,
    message: upstreamMessage ?? `The ${provider} provider answered HTTP ${status}`,
    type: typeof parsed.type === 'string' ? parsed.type : undefined,
    code: typeof parsed.code === 'string' ? parsed.code : null,
    param: typeof parsed.param === 'string' ? parsed.param : null,
  });
}
