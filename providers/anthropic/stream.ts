// Anthropic's named SSE events → OpenAI chunks, one request's state at a time: message_start gives
// the role chunk and the prompt usage, text and tool_use blocks become content and tool-call deltas
// (tool indexes count tool blocks only), message_delta the finish reason, message_stop the end.
// An `error` event throws; ping, thinking and unknown events are skipped.
import { badResponse } from '../../core/upstream-error.js';
import type { ChatChunk, Usage } from '../../core/chat-types.js';
import type { SseEvent } from '../../core/sse.js';
import type { StreamTranslator, TranslateContext } from '../../core/provider.js';
import { ChunkFactory } from '../shared/openai-chunks.js';
import { eventPayload } from '../shared/native-response.js';
import { anthropicStreamError } from './errors.js';
import { finishReason, toUsage, type AnthropicUsage } from './response.js';

interface Payload {
  type?: string;
  index?: number;
  message?: { id?: string; model?: string; usage?: AnthropicUsage };
  content_block?: { type?: string; text?: string; id?: string; name?: string };
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: AnthropicUsage;
  error?: unknown;
}

export class AnthropicStream implements StreamTranslator {
  finished = false;
  private readonly chunks: ChunkFactory;
  private native: AnthropicUsage | undefined;
  private stopReasonSeen = false;
  /** Anthropic content-block index → OpenAI tool-call index, for tool_use blocks. */
  private readonly toolIndex = new Map<number, number>();

  constructor(context: TranslateContext) {
    this.chunks = new ChunkFactory(`chatcmpl-${context.requestId}`, context.model.native_id);
  }

  get usage(): Usage | undefined {
    return this.native ? toUsage(this.native) : undefined;
  }

  event(event: SseEvent): ChatChunk[] {
    const payload = eventPayload('anthropic', event) as Payload;
    const type = payload.type ?? event.event;
    switch (type) {
      case 'message_start':
        return this.start(payload);
      case 'content_block_start':
        return this.blockStart(payload);
      case 'content_block_delta':
        return this.blockDelta(payload);
      case 'message_delta':
        if (payload.usage) this.native = { ...this.native, ...definedOnly(payload.usage) };
        if (!payload.delta?.stop_reason) return [];
        this.stopReasonSeen = true;
        return [this.chunks.delta({}, finishReason(payload.delta.stop_reason))];
      case 'message_stop':
        this.finished = true;
        return [];
      case 'error':
        throw anthropicStreamError(payload.error);
      default:
        return []; // ping, content_block_stop, and events newer than this adapter
    }
  }

  end(): ChatChunk[] {
    // A stream cut right after message_delta lost nothing but the closing event.
    if (this.stopReasonSeen) this.finished = true;
    const usage = this.usage;
    return this.finished && usage ? [this.chunks.usage(usage)] : [];
  }

  private start(payload: Payload): ChatChunk[] {
    const message = payload.message ?? {};
    if (message.id) this.chunks.id = message.id;
    if (message.model) this.chunks.model = message.model;
    if (message.usage) this.native = definedOnly(message.usage);
    return [this.chunks.delta({ content: '' })];
  }

  private blockStart(payload: Payload): ChatChunk[] {
    const block = payload.content_block;
    if (block?.type === 'text' && block.text) return [this.chunks.delta({ content: block.text })];
    if (block?.type !== 'tool_use' || typeof payload.index !== 'number') return [];
    const index = this.toolIndex.size;
    this.toolIndex.set(payload.index, index);
    return [this.chunks.delta({ tool_calls: [{ index, id: block.id, type: 'function', function: { name: block.name, arguments: '' } }] })];
  }

  private blockDelta(payload: Payload): ChatChunk[] {
    const delta = payload.delta;
    if (delta?.type === 'text_delta' && delta.text) return [this.chunks.delta({ content: delta.text })];
    if (delta?.type !== 'input_json_delta' || !delta.partial_json) return [];
    const index = this.toolIndex.get(payload.index ?? -1);
    if (index === undefined) throw badResponse('anthropic', 'input_json_delta for a block that is not a tool_use');
    return [this.chunks.delta({ tool_calls: [{ index, function: { arguments: delta.partial_json } }] })];
  }
}

/** message_delta repeats only some counts; absent ones must not erase message_start's. */
function definedOnly(usage: AnthropicUsage): AnthropicUsage {
  return Object.fromEntries(Object.entries(usage).filter(([, value]) => value !== undefined && value !== null)) as AnthropicUsage;
}
