// Reading a provider's native answer defensively: a body or stream event that is not what the
// protocol promises is a retryable bad_response (another attempt or provider may answer well); an
// SSE event's data must be a JSON object; text items of a content list are the answer (thinking
// items are not); a tool call needs an id and a name, and its arguments become a JSON string.
import type { ToolCall } from '../../core/chat-types.js';
import type { SseEvent } from '../../core/sse.js';
import { badResponse } from '../../core/upstream-error.js';
import { isObject } from './json-object.js';

/** An SSE event's data as the JSON object every streaming protocol here sends; anything else is a bad response. */
export function eventPayload(provider: string, event: SseEvent): Record<string, unknown> {
  let payload: unknown;
  try {
    payload = JSON.parse(event.data);
  } catch {
    throw badResponse(provider, `stream event${event.event ? ` ${event.event}` : ''} is not JSON`);
  }
  if (!isObject(payload)) throw badResponse(provider, 'stream event is not an object');
  return payload;
}

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
