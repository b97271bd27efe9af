// Rules for reading an OpenAI chat request that native adapters (cohere, mistral) apply alike:
// OpenAI-only features no native API here can honour are refused (logprobs, logit_bias, audio),
// user content is checked (text and images only; images only on a model the catalog says can see),
// and the output limit and stop list are read once. Each provider's renames stay in its adapter.
import { GatewayError } from '../core/errors.js';
import type { CatalogModel } from '../core/catalog.js';
import type { ChatMessage, ChatRequest } from '../core/chat-types.js';
import { isObject } from './json-object.js';

export type TextPart = { type: 'text'; text: string };
export type ImagePart = { type: 'image_url'; image_url: { url: string; detail?: string } };

/** A 400 naming the parameter the provider cannot honour. */
export function refuse(param: string, message: string): never {
  throw new GatewayError('bad_request', { param, message });
}

/**
 * Refuses what changes the answer's shape and has no native equivalent: a client asking for log
 * probabilities, token biases or audio would silently get less than it asked for.
 */
export function refuseOpenAIOnly(request: ChatRequest, provider: string): void {
  if (request.logprobs === true || request.top_logprobs != null) {
    refuse(request.logprobs === true ? 'logprobs' : 'top_logprobs', `The ${provider} provider does not return log probabilities through the gateway.`);
  }
  if (isObject(request.logit_bias) && Object.keys(request.logit_bias).length > 0) {
    refuse('logit_bias', `The ${provider} provider has no logit_bias.`);
  }
  const modalities = Array.isArray(request.modalities) ? request.modalities : [];
  if (request.audio != null || modalities.some((m) => m !== 'text')) {
    refuse(request.audio != null ? 'audio' : 'modalities', `The ${provider} provider answers with text only.`);
  }
}

/** `max_completion_tokens` (OpenAI's current name) wins over the deprecated `max_tokens`. */
export function maxOutputTokens(request: ChatRequest): number | undefined {
  return request.max_completion_tokens ?? request.max_tokens ?? undefined;
}

export function stopList(request: ChatRequest): string[] | undefined {
  const stop = request.stop;
  if (stop == null) return undefined;
  const list = typeof stop === 'string' ? [stop] : stop;
  return list.length > 0 ? list : undefined;
}

/** A user message's content as text and image parts, in OpenAI's shape (which both APIs accept). */
export function userContent(message: ChatMessage, at: string, model: CatalogModel, provider: string): string | Array<TextPart | ImagePart> {
  const content = message.content;
  if (typeof content === 'string') return content;
  return (content ?? []).map((part, j): TextPart | ImagePart => {
    if (part.type === 'text') return { type: 'text', text: String(part.text) };
    if (part.type === 'image_url') {
      if (!model.capabilities.vision) refuse(`${at}.content[${j}]`, `The model ${model.id} does not accept images.`);
      const image = part.image_url as { url: string; detail?: string };
      return { type: 'image_url', image_url: image.detail ? { url: image.url, detail: image.detail } : { url: image.url } };
    }
    return refuse(`${at}.content[${j}]`, `The ${provider} provider does not accept '${part.type}' content parts.`);
  });
}

/** Text parts kept as parts (system and tool content), anything else in them dropped. */
export function textContent(content: ChatMessage['content']): string | TextPart[] {
  if (typeof content === 'string') return content;
  return (content ?? []).filter(isTextPart).map((part) => ({ type: 'text', text: part.text }));
}

/** All the text of a content (assistant turns): parts joined, refusals and other parts left out. */
export function plainText(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? [])
    .filter(isTextPart)
    .map((part) => part.text)
    .join('');
}

function isTextPart(part: { type: string }): part is TextPart {
  return part.type === 'text' && typeof (part as { text?: unknown }).text === 'string';
}

export function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
