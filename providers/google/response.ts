// Gemini GenerateContentResponse → OpenAI chat completion, and what streams share with it: parts →
// text and tool calls (ids synthesized from the request id, since Gemini gives none; thought
// signatures kept in `extra_content.google`), finishReason → finish_reason (providers.md §5, with
// `tool_calls` when the answer calls functions), usageMetadata → usage with thoughts as reasoning.
import { badResponse } from '../../core/upstream-error.js';
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../core/chat-types.js';
import type { TranslateContext } from '../../core/provider.js';
import { isObject } from '../shared/json-object.js';

export interface UsageMetadata {
  promptTokenCount?: number;
  cachedContentTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
}

export interface NativePart {
  text?: unknown;
  thought?: unknown;
  thoughtSignature?: unknown;
  functionCall?: { id?: unknown; name?: unknown; args?: unknown };
}

export interface NativeResponse {
  candidates?: Array<{ content?: { parts?: NativePart[] }; finishReason?: string }>;
  promptFeedback?: { blockReason?: string };
  usageMetadata?: UsageMetadata;
  modelVersion?: string;
  responseId?: string;
  error?: unknown;
}

const CONTENT_FILTER = new Set([
  'SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'LANGUAGE', 'OTHER',
  'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION',
]);

/** MAX_TOKENS is length, the safety family content_filter, everything else (STOP, tool-call errors, unknown) stop. */
export function finishReason(native: string, calledTools: boolean): FinishReason {
  if (native === 'MAX_TOKENS') return 'length';
  if (CONTENT_FILTER.has(native)) return 'content_filter';
  return calledTools ? 'tool_calls' : 'stop';
}

/** Thinking is billed as output: completion = candidates + thoughts; tool-use prompt tokens are prompt. */
export function toUsage(native: UsageMetadata): Usage {
  const prompt = (native.promptTokenCount ?? 0) + (native.toolUsePromptTokenCount ?? 0);
  const thoughts = native.thoughtsTokenCount ?? 0;
  const completion = (native.candidatesTokenCount ?? 0) + thoughts;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: native.cachedContentTokenCount ?? 0 },
    completion_tokens_details: { reasoning_tokens: thoughts },
  };
}

/** Stable within the request (every chunk of a stream agrees), distinct across requests. */
export function toolCallId(requestId: string, index: number): string {
  return `call_${requestId.replace(/[^A-Za-z0-9]/g, '').slice(0, 24)}_${index}`;
}

/** A functionCall part as an OpenAI tool call (the `index`-th of the answer). */
export function toToolCall(part: NativePart, index: number, context: TranslateContext): ToolCall {
  const call = part.functionCall!;
  if (typeof call.name !== 'string') throw badResponse('google', 'a functionCall has no name');
  const toolCall: ToolCall = {
    id: typeof call.id === 'string' && call.id !== '' ? call.id : toolCallId(context.requestId, index),
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
  };
  if (typeof part.thoughtSignature === 'string') Object.assign(toolCall, { extra_content: { google: { thought_signature: part.thoughtSignature } } });
  return toolCall;
}

/** Visible text of parts (thought summaries are not part of the answer). */
export function textOfParts(parts: NativePart[]): string {
  return parts.map((part) => (part.thought !== true && typeof part.text === 'string' ? part.text : '')).join('');
}

export function toCompletion(body: unknown, context: TranslateContext): ChatCompletion {
  const native: unknown = Array.isArray(body) ? body[0] : body;
  if (!isObject(native) || (!Array.isArray(native.candidates) && !native.promptFeedback)) {
    throw badResponse('google', 'the response has neither candidates nor promptFeedback');
  }
  const response = native as NativeResponse;
  const candidate = response.candidates?.[0];
  const parts = Array.isArray(candidate?.content?.parts) ? candidate.content.parts : [];
  const toolCalls = parts.filter((part) => part.functionCall).map((part, index) => toToolCall(part, index, context));
  const text = textOfParts(parts);
  // No candidate means the prompt itself was blocked (promptFeedback.blockReason).
  const finish = candidate ? finishReason(candidate.finishReason ?? 'STOP', toolCalls.length > 0) : 'content_filter';
  const completion: ChatCompletion = {
    id: response.responseId ?? `chatcmpl-${context.requestId}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: response.modelVersion ?? context.model.native_id,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: text === '' && (toolCalls.length > 0 || !candidate) ? null : text, refusal: null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        logprobs: null,
        finish_reason: finish,
      },
    ],
  };
  if (response.usageMetadata) completion.usage = toUsage(response.usageMetadata);
  return completion;
}
