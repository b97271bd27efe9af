// Mistral streams: OpenAI-like chunks, brought to OpenAI's exact shape.
import type { ChatChunk, FinishReason, Usage } from '../../core/chat-types.js';
import type { SseEvent } from '../../core/sse.js';
import type { StreamTranslator, TranslateContext } from '../../core/provider.js';
import { badResponse } from '../../core/upstream-error.js';
import { isObject } from '../shared/json-object.js';
import { contentText, eventPayload } from '../shared/native-response.js';
import { ToolCallIndexer, compatibleFinishReason } from '../openai-compatible/divergences.js';
import { mistralStreamError } from './errors.js';
import { mistralUsage } from './response.js';

const PROVIDER = 'mistral';

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
    if (event.event === 'error' || payload.object === 'error' || 'error' in payload || 'detail' in payload) throw mistralStreamError(payload);
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
