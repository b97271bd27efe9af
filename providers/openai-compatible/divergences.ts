// What OpenAI-compatible servers send differently from OpenAI (providers.md §0, "known
// divergences"), brought back to OpenAI's shape. Shared by the mistral adapter and the
// OpenAI-compatible one (openai, custom): finish reasons outside OpenAI's enum, and streamed tool
// calls without `index` or `type`. Conforming input comes out as it went in.
import type { ChunkToolCall, FinishReason } from '../../core/chat-types.js';
import { badResponse, reportedFailure } from '../../core/upstream-error.js';
import { isObject } from '../shared/json-object.js';
import { argumentsText } from '../shared/native-response.js';

const OPENAI_FINISH_REASONS: ReadonlySet<unknown> = new Set<FinishReason>(['stop', 'length', 'tool_calls', 'content_filter', 'function_call']);

/**
 * providers.md §5: `model_length` (the context window ran out) is `length` for the client; `error`
 * is no answer but a failed attempt another try may fix; anything else unknown ends the answer
 * normally, as litellm does.
 */
export function compatibleFinishReason(provider: string, value: unknown, inStream: boolean): FinishReason {
  if (OPENAI_FINISH_REASONS.has(value)) return value as FinishReason;
  if (value === 'model_length') return 'length';
  if (value === 'error') throw reportedFailure(provider, { finishReason: 'error', inStream });
  return 'stop';
}

/**
 * One stream's tool-call fragments in OpenAI's shape: each call gets an `index` counted from 0 across
 * the stream, and its first fragment its id, name and `type: "function"`. A fragment belongs to the
 * call with its id, or, without an id, to the latest call that had its upstream index (OpenAI's
 * later fragments carry only the index). A repeat of a known call keeps only the index and arguments.
 */
export class ToolCallIndexer {
  private readonly indexes = new Map<string, number>();
  private count = 0;

  constructor(private readonly provider: string) {}

  fragment(call: unknown): ChunkToolCall {
    if (!isObject(call)) throw badResponse(this.provider, 'a streamed tool call is not an object');
    const fn = isObject(call.function) ? call.function : {};
    const byUpstreamIndex = `#${String(call.index)}`;
    const key = typeof call.id === 'string' ? `id:${call.id}` : byUpstreamIndex;
    const known = this.indexes.get(key);
    if (known !== undefined) return { index: known, function: { arguments: argumentsText(fn.arguments) } };
    if (typeof call.id !== 'string' || typeof fn.name !== 'string') throw badResponse(this.provider, 'a streamed tool call has no id or name');
    const index = this.count++;
    this.indexes.set(key, index);
    if (call.index !== undefined) this.indexes.set(byUpstreamIndex, index);
    return { index, id: call.id, type: 'function', function: { name: fn.name, arguments: argumentsText(fn.arguments) } };
  }
}
