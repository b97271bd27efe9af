// Mistral chat completion → OpenAI's (the stream is in stream.ts). Close to OpenAI's wire format, with differences
// handled here: tool calls arrive whole and without index/type, usage rides on the finish chunk
// (re-sent as OpenAI's final usage chunk), content may be a list of chunks (thinking dropped),
// `model_length` is `length`, `error` is a failed attempt. See docs/providers/mistral.md.
import type { ChatCompletion, Usage } from '../../core/chat-types.js';
import { badResponse } from '../../core/upstream-error.js';
import { isObject } from '../shared/json-object.js';
import { contentText, isCount, toolCall } from '../shared/native-response.js';
import { compatibleFinishReason } from '../openai-compatible/divergences.js';
import type { TranslateContext } from '../../core/provider.js';

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
