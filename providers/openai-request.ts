// Reading an OpenAI chat request the way every native translator needs it: text out of text-part
// arrays, inline data out of data: URLs, tool-call arguments as objects, the output limit and the
// stop list. A request these readers cannot make sense of is refused with a 400 naming the field.
import type { ChatMessage, ChatRequest, ContentPart, ToolCall } from '../core/chat-types.js';
import { GatewayError } from '../core/errors.js';

/** A 400 for a field the provider cannot honour under the adapter's documented rules; `why` names the provider. */
export function refuse(param: string, why: string): GatewayError {
  return new GatewayError('bad_request', { param, message: `Invalid value for '${param}': ${why}.` });
}

/** The text of a string or text-part content (parts joined by a blank line, as separate paragraphs). */
export function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part): part is ContentPart & { text: string } => (part.type === 'text' || part.type === 'refusal') && typeof (part as { text?: unknown }).text === 'string')
    .map((part) => part.text)
    .join('\n\n');
}

export interface InlineData {
  mimeType: string;
  /** Base64, as the data URL carried it. */
  data: string;
}

/** `data:<mime>;base64,<data>` → its parts; undefined for anything else (including non-base64 data URLs). */
export function parseDataUrl(url: string): InlineData | undefined {
  const match = /^data:([^;,]+)((?:;[^;,]+)*);base64,(.*)$/s.exec(url);
  if (!match) return undefined;
  return { mimeType: match[1]!.toLowerCase(), data: match[3]! };
}

export function isHttpUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}

/** A tool call's `arguments` (a JSON string) as the object native APIs want; `""` means no arguments. */
export function toolArguments(call: ToolCall, param: string): Record<string, unknown> {
  const text = call.function.arguments.trim();
  if (text === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw refuse(param, 'tool call arguments must be a JSON object');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw refuse(param, 'tool call arguments must be a JSON object');
  return parsed as Record<string, unknown>;
}

/** The client's output limit: `max_completion_tokens` wins over the deprecated `max_tokens`. */
export function outputLimit(request: ChatRequest): number | undefined {
  return request.max_completion_tokens ?? request.max_tokens ?? undefined;
}

export function stopList(request: ChatRequest): string[] {
  if (request.stop == null) return [];
  return typeof request.stop === 'string' ? [request.stop] : [...request.stop];
}
