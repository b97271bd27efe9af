// Cohere v2 chat response and stream → OpenAI completion and chunks. Usage is what Cohere bills
// (billed_units), so usage × catalog price matches the invoice; the tool plan is not content and is
// left out; finish reasons ERROR/TIMEOUT and error events become UpstreamErrors (docs/providers/cohere.md).
import type { ChatChunk, ChatCompletion, ChunkToolCall, FinishReason, Usage } from '../../core/chat-types.js';
import type { SseEvent } from '../../core/sse.js';
import { type UpstreamError, badResponse, reportedFailure } from '../../core/upstream-error.js';
import { isObject } from '../json-object.js';
import { argumentsText, contentText, eventPayload, isCount, toolCall } from '../native-response.js';
import { ChunkFactory } from '../openai-chunks.js';
import type { StreamTranslator, TranslateContext } from '../types.js';

const PROVIDER = 'cohere';

export function cohereCompletion(body: unknown, context: TranslateContext): ChatCompletion {
  if (!isObject(body) || !isObject(body.message)) throw badResponse(PROVIDER, 'response has no message');
  const finish = finishReason(body.finish_reason, body.message.error ?? body.error, false);
  const text = contentText(body.message.content);
  const toolCalls = Array.isArray(body.message.tool_calls) ? body.message.tool_calls.map((call) => toolCall(PROVIDER, call)) : [];
  const usage = cohereUsage(body.usage);
  return {
    id: typeof body.id === 'string' ? body.id : `chatcmpl-${context.requestId}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: context.model.native_id,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          // OpenAI's shape for a turn that only calls tools: content null, not "".
          content: toolCalls.length > 0 && text === '' ? null : text,
          refusal: null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: finish,
      },
    ],
    ...(usage ? { usage } : {}),
  };
}

/**
 * Cohere's `tokens` count the prompt template it adds (507 tokens for a 12-token question in a
 * recorded response) and `cached_tokens` counts template tokens that hit its cache; neither is
 * billed. `billed_units` is the invoice, so it becomes prompt/completion tokens and no cached
 * discount is reported. `tokens` is the fallback only if billed_units is missing: over- rather
 * than under-billing.
 */
export function cohereUsage(usage: unknown): Usage | undefined {
  if (!isObject(usage)) return undefined;
  const counts = [usage.billed_units, usage.tokens].find((c): c is Record<string, unknown> => isObject(c) && (isCount(c.input_tokens) || isCount(c.output_tokens)));
  if (!counts) return undefined;
  const prompt = isCount(counts.input_tokens) ? counts.input_tokens : 0;
  const completion = isCount(counts.output_tokens) ? counts.output_tokens : 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** providers.md §5: COMPLETE and STOP_SEQUENCE stop, MAX_TOKENS is length, TOOL_CALL tool_calls. */
function finishReason(value: unknown, error: unknown, inStream: boolean): FinishReason {
  switch (value) {
    case 'MAX_TOKENS':
      return 'length';
    case 'TOOL_CALL':
      return 'tool_calls';
    case 'ERROR':
    case 'TIMEOUT':
      throw generationFailed(String(value), error, inStream);
    default:
      if (typeof error === 'string' && error !== '') throw generationFailed('ERROR', error, inStream);
      return 'stop'; // COMPLETE, STOP_SEQUENCE, and (as litellm does) anything new
  }
}

/** ERROR and TIMEOUT are not answers: another attempt (or provider) may give one. */
function generationFailed(finish: string, error: unknown, inStream: boolean): UpstreamError {
  const detail = typeof error === 'string' && error !== '' ? error : undefined;
  return reportedFailure(PROVIDER, { finishReason: finish, detail, timedOut: finish === 'TIMEOUT', inStream });
}

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
    if (type === 'error' || (type === undefined && typeof payload.message === 'string')) throw streamError(payload.message);
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

function streamError(message: unknown): UpstreamError {
  return reportedFailure(PROVIDER, { detail: typeof message === 'string' ? message : undefined });
}
