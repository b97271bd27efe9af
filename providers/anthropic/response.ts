// Anthropic Message → OpenAI chat completion, and the two mappings streams share: stop_reason →
// finish_reason (providers.md §5) and Anthropic usage → OpenAI usage, where cache reads are
// `cached_tokens` and cache writes `cache_write_tokens` so billing uses each one's price.
import { badResponse } from '../../core/upstream-error.js';
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../core/chat-types.js';
import type { TranslateContext } from '../../core/provider.js';
import { isObject } from '../shared/json-object.js';

export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  output_tokens_details?: { thinking_tokens?: number | null } | null;
}

const FINISH: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

/** Unknown stop reasons (newer than this adapter) end the answer normally. */
export function finishReason(stopReason: unknown): FinishReason {
  return (typeof stopReason === 'string' && FINISH[stopReason]) || 'stop';
}

/** `input_tokens` excludes cached tokens: the prompt is input + cache writes + cache reads. */
export function toUsage(native: AnthropicUsage): Usage {
  const written = native.cache_creation_input_tokens ?? 0;
  const read = native.cache_read_input_tokens ?? 0;
  const prompt = (native.input_tokens ?? 0) + written + read;
  const completion = native.output_tokens ?? 0;
  const usage: Usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: read, cache_write_tokens: written },
  };
  const thinking = native.output_tokens_details?.thinking_tokens;
  if (typeof thinking === 'number') usage.completion_tokens_details = { reasoning_tokens: thinking };
  return usage;
}

interface NativeBlock {
  type?: unknown;
  text?: unknown;
  id?: unknown;
  name?: unknown;
  input?: unknown;
}

export function toCompletion(body: unknown, context: TranslateContext): ChatCompletion {
  const message = body as { id?: unknown; model?: unknown; content?: unknown; stop_reason?: unknown; usage?: AnthropicUsage };
  if (!isObject(body) || !Array.isArray(message.content)) throw badResponse('anthropic', 'the message has no content array');
  let text: string | null = null;
  const toolCalls: ToolCall[] = [];
  for (const block of message.content as NativeBlock[]) {
    // thinking and server-tool blocks have no place in a chat completion; their tokens are in usage
    if (block?.type === 'text' && typeof block.text === 'string') text = (text ?? '') + block.text;
    if (block?.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') {
      toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
    }
  }
  const completion: ChatCompletion = {
    id: typeof message.id === 'string' ? message.id : `chatcmpl-${context.requestId}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: typeof message.model === 'string' ? message.model : context.model.native_id,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: text, refusal: null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        logprobs: null,
        finish_reason: finishReason(message.stop_reason),
      },
    ],
  };
  if (message.usage && typeof message.usage === 'object') completion.usage = toUsage(message.usage);
  return completion;
}
