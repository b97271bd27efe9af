// Rules for reading a native answer back into OpenAI's shape that native adapters (cohere, mistral)
// apply alike: text items of a content list are the answer (thinking items are not), a tool call
// needs an id and a name and its arguments become a JSON string, token counts are non-negative.
import type { ToolCall } from '../core/chat-types.js';
import { badResponse } from './openai-compatible.js';
import { isObject } from './request-rules.js';

/** A string, or a list whose `text` items are joined; thinking and other items are left out. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((item) => (isObject(item) && item.type === 'text' && typeof item.text === 'string' ? item.text : '')).join('');
}

/** A whole tool call in OpenAI's shape; `type` is added where the provider leaves it out. */
export function toolCall(provider: string, call: unknown): ToolCall {
  if (!isObject(call) || typeof call.id !== 'string' || !isObject(call.function) || typeof call.function.name !== 'string') {
    throw badResponse(provider, 'a tool call has no id or name');
  }
  return { id: call.id, type: 'function', function: { name: call.function.name, arguments: argumentsText(call.function.arguments) } };
}

/** Some SDKs type arguments as a string or an object; OpenAI's are always a JSON string. */
export function argumentsText(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === undefined ? '' : JSON.stringify(value);
}

export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}
