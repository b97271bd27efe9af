// Gemini's data-only SSE (each event a GenerateContentResponse with only the new parts, usage
// cumulative, finishReason on the last) → OpenAI chunks for one request: text and whole function
// calls as deltas (tool indexes and synthesized ids stable across the stream), then the finish
// chunk, then the usage chunk. An event carrying `error` throws.
import type { ChatChunk, ChunkToolCall, Usage } from '../../core/chat-types.js';
import type { SseEvent } from '../../core/sse.js';
import type { StreamTranslator, TranslateContext } from '../../core/provider.js';
import { ChunkFactory } from '../shared/openai-chunks.js';
import { eventPayload } from '../shared/native-response.js';
import { googleStreamError } from './errors.js';
import { finishReason, textOfParts, toToolCall, toUsage, type NativeResponse, type UsageMetadata } from './response.js';

export class GeminiStream implements StreamTranslator {
  finished = false;
  private readonly chunks: ChunkFactory;
  private native: UsageMetadata | undefined;
  private toolCalls = 0;
  private identified = false;

  constructor(private readonly context: TranslateContext) {
    this.chunks = new ChunkFactory(`chatcmpl-${context.requestId}`, context.model.native_id);
  }

  get usage(): Usage | undefined {
    return this.native ? toUsage(this.native) : undefined;
  }

  event(event: SseEvent): ChatChunk[] {
    const response = eventPayload('google', event) as NativeResponse;
    if (response.error !== undefined) throw googleStreamError(response.error);
    if (!this.identified) {
      this.identified = true;
      if (response.responseId) this.chunks.id = response.responseId;
      if (response.modelVersion) this.chunks.model = response.modelVersion;
    }
    if (response.usageMetadata) this.native = response.usageMetadata;

    const candidate = response.candidates?.[0];
    if (!candidate) {
      if (!response.promptFeedback?.blockReason) return [];
      this.finished = true;
      return [this.chunks.delta({}, 'content_filter')];
    }
    const out: ChatChunk[] = [];
    const parts = Array.isArray(candidate.content?.parts) ? candidate.content.parts : [];
    const text = textOfParts(parts);
    const calls: ChunkToolCall[] = parts
      .filter((part) => part.functionCall)
      .map((part) => {
        const index = this.toolCalls++;
        return { index, ...toToolCall(part, index, this.context) };
      });
    if (text !== '' || calls.length > 0) out.push(this.chunks.delta({ ...(text !== '' ? { content: text } : {}), ...(calls.length > 0 ? { tool_calls: calls } : {}) }));
    if (candidate.finishReason) {
      this.finished = true;
      out.push(this.chunks.delta({}, finishReason(candidate.finishReason, this.toolCalls > 0)));
    }
    return out;
  }

  end(): ChatChunk[] {
    const usage = this.usage;
    return this.finished && usage ? [this.chunks.usage(usage)] : [];
  }
}
