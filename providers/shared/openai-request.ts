// Reading an OpenAI chat request the way native translators need it: the output limit and the stop
// list, text out of content parts, inline data out of data: URLs, tool-call arguments as objects, and
// the rules the native adapters share (OpenAI-only features refused by all of them, unsupported user
// content by cohere and mistral). A request these readers cannot honour is refused with a 400 naming the field.
import type { CatalogModel } from '../../core/catalog.js';
import type { ChatMessage, ChatRequest, ContentPart, ToolCall } from '../../core/chat-types.js';
import { GatewayError } from '../../core/errors.js';
import { isObject } from './json-object.js';

export type TextPart = { type: 'text'; text: string };
export type ImagePart = { type: 'image_url'; image_url: { url: string; detail?: string } };

/** A 400 naming the field the provider cannot honour under the adapter's documented rules; `message` is what the client reads. */
export function refuse(param: string, message: string): GatewayError {
  return new GatewayError('bad_request', { param, message });
}

/** `refuse` in the gateway's own wording, `Invalid value for '<param>': <why>.`, where `why` names the provider. */
export function invalidValue(param: string, why: string): GatewayError {
  return refuse(param, `Invalid value for '${param}': ${why}.`);
}

/** The client's output limit: `max_completion_tokens` (OpenAI's current name) wins over the deprecated `max_tokens`. */
export function outputLimit(request: ChatRequest): number | undefined {
  return request.max_completion_tokens ?? request.max_tokens ?? undefined;
}

/** `stop` as a list; empty when the client set none. */
export function stopList(request: ChatRequest): string[] {
  if (request.stop == null) return [];
  return typeof request.stop === 'string' ? [request.stop] : [...request.stop];
}

/** The text of a string or text-part content, refusals included, parts joined by a blank line as separate paragraphs (anthropic, google). */
export function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part): part is ContentPart & { text: string } => (part.type === 'text' || part.type === 'refusal') && typeof (part as { text?: unknown }).text === 'string')
    .map((part) => part.text)
    .join('\n\n');
}

/** All the text parts of a content run together, refusals and other parts left out (cohere and mistral assistant turns). */
export function plainText(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? [])
    .filter(isTextPart)
    .map((part) => part.text)
    .join('');
}

/** Text parts kept as parts (cohere and mistral system and tool content), anything else in them dropped. */
export function textContent(content: ChatMessage['content']): string | TextPart[] {
  if (typeof content === 'string') return content;
  return (content ?? []).filter(isTextPart).map((part) => ({ type: 'text', text: part.text }));
}

function isTextPart(part: { type: string }): part is TextPart {
  return part.type === 'text' && typeof (part as { text?: unknown }).text === 'string';
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
    throw invalidValue(param, 'tool call arguments must be a JSON object');
  }
  if (!isObject(parsed)) throw invalidValue(param, 'tool call arguments must be a JSON object');
  return parsed;
}

/**
 * Refuses what changes the answer's shape and has no native equivalent: a client asking for log
 * probabilities, token biases or audio would silently get less than it asked for.
 */
export function refuseOpenAIOnly(request: ChatRequest, provider: string): void {
  if (request.logprobs === true || request.top_logprobs != null) {
    throw refuse(request.logprobs === true ? 'logprobs' : 'top_logprobs', `The ${provider} provider does not return log probabilities through the gateway.`);
  }
  if (isObject(request.logit_bias) && Object.keys(request.logit_bias).length > 0) {
    throw refuse('logit_bias', `The ${provider} provider has no logit_bias.`);
  }
  const modalities = Array.isArray(request.modalities) ? request.modalities : [];
  if (request.audio != null || modalities.some((m) => m !== 'text')) {
    throw refuse(request.audio != null ? 'audio' : 'modalities', `The ${provider} provider answers with text only.`);
  }
}

/** A user message's content as text and image parts in OpenAI's shape (which cohere and mistral accept); images only on a model the catalog says can see. */
export function userContent(message: ChatMessage, at: string, model: CatalogModel, provider: string): string | Array<TextPart | ImagePart> {
  const content = message.content;
  if (typeof content === 'string') return content;
  return (content ?? []).map((part, j): TextPart | ImagePart => {
    if (part.type === 'text') return { type: 'text', text: String(part.text) };
    if (part.type === 'image_url') {
      if (!model.capabilities.vision) throw refuse(`${at}.content[${j}]`, `The model ${model.id} does not accept images.`);
      const image = part.image_url as { url: string; detail?: string };
      return { type: 'image_url', image_url: image.detail ? { url: image.url, detail: image.detail } : { url: image.url } };
    }
    throw refuse(`${at}.content[${j}]`, `The ${provider} provider does not accept '${part.type}' content parts.`);
  });
}
