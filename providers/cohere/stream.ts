// Cohere v2 chat streams, event by event, into OpenAI chunks.
import type { ChatChunk, ChunkToolCall, Usage } from '../../core/chat-types.js';
import type { SseEvent } from '../../core/sse.js';
import type { StreamTranslator, TranslateContext } from '../../core/provider.js';
import { badResponse } from '../../core/upstream-error.js';
import { isObject } from '../shared/json-object.js';
import { argumentsText, eventPayload } from '../shared/native-response.js';
import { ChunkFactory } from '../shared/openai-chunks.js';
import { cohereStreamError } from './errors.js';
import { cohereUsage, finishReason } from './response.js';

const PROVIDER = 'cohere';

/**
 * One Cohere stream: named events (message-start, content-*, tool-plan-delta, tool-call-*,
 * citation-*, debug, message-end) and no terminator; message-end says the answer is complete.
 */
export class CohereStream implements StreamTranslator {
  usage: Usage | undefined;
  finished = false;
  private readonly chunks: ChunkFactory;
  /** Cohere's tool-call index → the OpenAI index given at its tool-call-start. */
  private readonly toolIndexes = new Map<unknown, number>();

  constructor(context: TranslateContext) {
    this.chunks = new ChunkFactory(`chatcmpl-${context.requestId}`, context.model.native_id);
  }

  event(event: SseEvent): ChatChunk[] {
    if (event.data === '[DONE]') return []; // the SDK's terminator; Cohere's own end is message-end
    const payload = eventPayload(PROVIDER, event);
    const type = typeof payload.type === 'string' ? payload.type : event.event;
    if (type === 'error' || (type === undefined && typeof payload.message === 'string')) throw cohereStreamError(payload.message);
    const message = isObject(payload.delta) && isObject(payload.delta.message) ? payload.delta.message : {};
    switch (type) {
      case 'message-start':
        if (typeof payload.id === 'string') this.chunks.id = payload.id;
        return [this.chunks.delta({ content: '' })];
      case 'content-start':
      case 'content-delta': {
        const text = isObject(message.content) ? message.content.text : undefined;
        return typeof text === 'string' && text !== '' ? [this.chunks.delta({ content: text })] : [];
      }
      case 'tool-call-start':
        return [this.chunks.delta({ tool_calls: [this.toolCallStart(payload.index, message.tool_calls)] })];
      case 'tool-call-delta':
        return [this.chunks.delta({ tool_calls: [this.toolCallDelta(payload.index, message.tool_calls)] })];
      case 'message-end':
        return this.messageEnd(isObject(payload.delta) ? payload.delta : {});
      default:
        // tool-plan-delta: the model's plan before calling tools is not the answer (documented);
        // content-end, tool-call-end, citation-*, debug carry nothing an OpenAI client reads.
        return [];
    }
  }

  end(): ChatChunk[] {
    return [];
  }

  private toolCallStart(index: unknown, call: unknown): ChunkToolCall {
    if (!isObject(call) || typeof call.id !== 'string' || !isObject(call.function) || typeof call.function.name !== 'string') {
      throw badResponse(PROVIDER, 'tool-call-start has no id or name');
    }
    const openAIIndex = this.toolIndexes.size;
    this.toolIndexes.set(index, openAIIndex);
    return { index: openAIIndex, id: call.id, type: 'function', function: { name: call.function.name, arguments: argumentsText(call.function.arguments) } };
  }

  private toolCallDelta(index: unknown, call: unknown): ChunkToolCall {
    const openAIIndex = this.toolIndexes.get(index);
    if (openAIIndex === undefined) throw badResponse(PROVIDER, 'tool-call-delta before its tool-call-start');
    const args = isObject(call) && isObject(call.function) ? argumentsText(call.function.arguments) : '';
    return { index: openAIIndex, function: { arguments: args } };
  }

  private messageEnd(delta: Record<string, unknown>): ChatChunk[] {
    const finish = finishReason(delta.finish_reason, delta.error, true);
    this.usage = cohereUsage(delta.usage);
    this.finished = true;
    const chunks = [this.chunks.delta({}, finish)];
    // The usage chunk OpenAI sends last with include_usage; core drops it when the client did not ask.
    if (this.usage) chunks.push(this.chunks.usage(this.usage));
    return chunks;
  }
}
