// An OpenAI-compatible stream: chunks pass through, checked, with tool-call fragments indexed and
// usage moved to OpenAI's last, choice-less chunk. A chunk that needed nothing keeps its event's
// text (core/chunk-text.ts) when the provider's JSON can be sent as it came (OpenAI's own).
import type { ChatChunk, Usage } from '../../core/chat-types.js';
import type { SseEvent } from '../../core/sse.js';
import type { StreamTranslator } from '../../core/provider.js';
import { badResponse } from '../../core/upstream-error.js';
import { chunkReceivedAs } from '../../core/chunk-text.js';
import { isObject } from '../shared/json-object.js';
import { eventPayload } from '../shared/native-response.js';
import { ToolCallIndexer, compatibleFinishReason } from './divergences.js';
import { openAIStreamError } from './errors.js';

export class OpenAICompatibleStream implements StreamTranslator {
  usage: Usage | undefined;
  finished = false;
  private finishReasonSeen = false;
  /** Usage that came on a chunk with choices (Mistral-style), owed as OpenAI's last, choice-less chunk. */
  private usageOwed = false;
  private last: ChatChunk | undefined;
  private readonly toolCalls: ToolCallIndexer;

  /** `asSent`: the provider's JSON may reach clients as it came (see answersAsSent in ./index.ts). */
  constructor(
    private readonly provider: string,
    private readonly asSent = false,
  ) {
    this.toolCalls = new ToolCallIndexer(provider);
  }

  event(event: SseEvent): ChatChunk[] {
    if (event.data === '[DONE]') {
      this.finished = true;
      return this.owedUsage();
    }
    const chunk = eventPayload(this.provider, event) as ChatChunk & { error?: unknown };
    if (event.event === 'error' || 'error' in chunk) throw openAIStreamError(this.provider, chunk.error);
    if (!Array.isArray(chunk.choices)) throw badResponse(this.provider, 'stream chunk has no choices');
    let changed = chunk.object !== 'chat.completion.chunk';
    for (const choice of chunk.choices) {
      if (!isObject(choice)) throw badResponse(this.provider, 'stream choice is not an object');
      if (choice.finish_reason != null) {
        const reason = compatibleFinishReason(this.provider, choice.finish_reason, true);
        if (reason !== choice.finish_reason) changed = true;
        choice.finish_reason = reason;
        this.finishReasonSeen = true;
      }
      const toolCalls: unknown = choice.delta?.tool_calls;
      if (Array.isArray(toolCalls)) {
        choice.delta.tool_calls = toolCalls.map((call) => this.toolCalls.fragment(call));
        changed = true;
      }
    }
    if (chunk.usage) {
      this.usage = chunk.usage;
      this.usageOwed = chunk.choices.length > 0;
      if (this.usageOwed) {
        delete chunk.usage;
        changed = true;
      }
    }
    chunk.object = 'chat.completion.chunk';
    this.last = chunk;
    return [changed || !this.asSent ? chunk : chunkReceivedAs(chunk, event.data)];
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
