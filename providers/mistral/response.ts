// Mistral chat completion and stream → OpenAI's. Close to OpenAI's wire format, with differences
// handled here: tool calls arrive whole and without index/type, usage rides on the finish chunk
// (re-sent as OpenAI's final usage chunk), content may be a list of chunks (thinking dropped),
// `model_length` is `length`, `error` is a failed attempt. See docs/providers/mistral.md.
import type { ChatChunk, ChatCompletion, FinishReason, Usage } from '../../core/chat-types.js';
import type { SseEvent } from '../../core/sse.js';
import { type UpstreamError, badResponse, reportedFailure } from '../../core/upstream-error.js';
import { isObject } from '../json-object.js';
import { contentText, eventPayload, isCount, toolCall } from '../native-response.js';
import { ToolCallIndexer, compatibleFinishReason } from '../compatible-divergences.js';
import type { StreamTranslator, TranslateContext } from '../types.js';

const PROVIDER = 'mistral';

export function mistralCompletion(body: unknown, context: TranslateContext): ChatCompletion {
  if (!isObject(body) || !Array.isArray(body.choices) || body.choices.length === 0 || !body.choices.every((c) => isObject(c) && isObject(c.message))) {
    throw badResponse(PROVIDER, 'response has no choices[].message');
  }
  const usage = mistralUsage(body.usage);
  return {
    id: typeof body.id === 'string' ? body.id : `chatcmpl-${context.requestId}`,
    object: 'chat.completion',
    created: typeof body.created === 'number' ? body.created : Math.floor(Date.now() / 1000),
    model: typeof body.model === 'string' ? body.model : context.model.native_id,
    choices: (body.choices as Array<{ index?: unknown; message: Record<string, unknown>; finish_reason?: unknown }>).map((choice, i) => {
      const text = contentText(choice.message.content);
      const toolCalls = Array.isArray(choice.message.tool_calls) ? choice.message.tool_calls.map((call) => toolCall(PROVIDER, call)) : [];
      return {
        index: typeof choice.index === 'number' ? choice.index : i,
        message: {
          role: 'assistant' as const,
          // Mistral sends "" next to tool calls; OpenAI's shape is null.
          content: toolCalls.length > 0 && text === '' ? null : text,
          refusal: null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: compatibleFinishReason(PROVIDER, choice.finish_reason, false),
      };
    }),
    ...(usage ? { usage } : {}),
  };
}

/** Cached prompt tokens come as prompt_tokens_details.cached_tokens or (older) num_cached_tokens. */
export function mistralUsage(usage: unknown): Usage | undefined {
  if (!isObject(usage) || !isCount(usage.prompt_tokens) || !isCount(usage.completion_tokens)) return undefined;
  const details = isObject(usage.prompt_tokens_details) ? usage.prompt_tokens_details : isObject(usage.prompt_token_details) ? usage.prompt_token_details : {};
  const cached = isCount(details.cached_tokens) ? details.cached_tokens : isCount(usage.num_cached_tokens) ? usage.num_cached_tokens : 0;
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: isCount(usage.total_tokens) ? usage.total_tokens : usage.prompt_tokens + usage.completion_tokens,
    ...(cached > 0 ? { prompt_tokens_details: { cached_tokens: cached } } : {}),
  };
}

/** One Mistral stream: data-only chunks ending in `data: [DONE]`. */
export class MistralStream implements StreamTranslator {
  usage: Usage | undefined;
  finished = false;
  private id: string;
  private created = Math.floor(Date.now() / 1000);
  private model: string;
  private roleSent = false;
  private finishSeen = false;
  private usageSent = false;
  private readonly toolCalls = new ToolCallIndexer(PROVIDER);

  constructor(context: TranslateContext) {
    this.id = `chatcmpl-${context.requestId}`;
    this.model = context.model.native_id;
  }

  event(event: SseEvent): ChatChunk[] {
    if (event.data === '[DONE]') {
      this.finished = true;
      return this.usageChunk();
    }
    const payload = eventPayload(PROVIDER, event);
    if (event.event === 'error' || payload.object === 'error' || 'error' in payload || 'detail' in payload) throw streamError(payload);
    if (!Array.isArray(payload.choices)) throw badResponse(PROVIDER, 'stream chunk has no choices');
    if (typeof payload.id === 'string') this.id = payload.id;
    if (typeof payload.created === 'number') this.created = payload.created;
    if (typeof payload.model === 'string') this.model = payload.model;
    const usage = mistralUsage(payload.usage);
    if (usage) this.usage = usage;
    const chunks: ChatChunk[] = [];
    for (const choice of payload.choices as unknown[]) {
      if (!isObject(choice)) throw badResponse(PROVIDER, 'stream choice is not an object');
      const source = isObject(choice.delta) ? choice.delta : {};
      const delta: ChatChunk['choices'][number]['delta'] = {};
      if (!this.roleSent) {
        delta.role = 'assistant';
        delta.content = '';
        this.roleSent = true;
      }
      const text = contentText(source.content);
      if (text !== '') delta.content = text;
      if (Array.isArray(source.tool_calls) && source.tool_calls.length > 0) delta.tool_calls = source.tool_calls.map((call) => this.toolCalls.fragment(call));
      const finish = choice.finish_reason == null ? null : compatibleFinishReason(PROVIDER, choice.finish_reason, true);
      if (finish) this.finishSeen = true;
      if (Object.keys(delta).length > 0 || finish) {
        chunks.push(this.chunk(typeof choice.index === 'number' ? choice.index : 0, delta, finish));
      }
    }
    return chunks;
  }

  end(): ChatChunk[] {
    // [DONE] is Mistral's documented end; a stream cut right after the finish chunk lost nothing.
    if (!this.finishSeen || this.finished) return [];
    this.finished = true;
    return this.usageChunk();
  }

  /** OpenAI's last chunk with include_usage; core drops it when the client did not ask. */
  private usageChunk(): ChatChunk[] {
    if (!this.usage || this.usageSent) return [];
    this.usageSent = true;
    return [{ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage: this.usage }];
  }

  private chunk(index: number, delta: ChatChunk['choices'][number]['delta'], finish: FinishReason | null): ChatChunk {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index, delta, logprobs: null, finish_reason: finish }] };
  }
}

/** An error object inside the stream (`{"object":"error",…}`, `{"error":…}` or `{"detail":…}`). */
function streamError(payload: Record<string, unknown>): UpstreamError {
  const inner = isObject(payload.error) ? payload.error : payload;
  const detail = typeof inner.message === 'string' ? inner.message : typeof inner.detail === 'string' ? inner.detail : undefined;
  return reportedFailure(PROVIDER, { detail, type: typeof inner.type === 'string' ? inner.type : undefined, code: typeof inner.code === 'string' ? inner.code : undefined });
}
