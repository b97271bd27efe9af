// Token estimates before a request is sent (routing on context windows, cost estimates and
// reservations) and for output that arrived without a usage report. Text is counted with OpenAI's
// o200k tokenizer (gpt-tokenizer); other providers' tokenizers differ by some ±20%, which is why
// these are estimates and bills always come from the provider's reported usage when there is one.
// Rules: 3 tokens per message plus 3 to prime the reply (OpenAI's documented overhead); an image
// counts 85 tokens at detail "low", 765 otherwise (one 512px tile at "high"'s typical 1024px cut);
// text longer than 64k characters is counted on its first 64k and extrapolated, so one request
// never blocks the event loop for more than about a millisecond.
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { ChatRequest, ContentPart } from './chat-types.js';

const EXACT_CHARS = 64 * 1024;
const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;
const IMAGE_LOW = 85;
const IMAGE_DEFAULT = 765;

export function countTextTokens(text: string): number {
  if (text.length <= EXACT_CHARS) return countTokens(text);
  const head = countTokens(text.slice(0, EXACT_CHARS));
  return Math.ceil((head * text.length) / EXACT_CHARS);
}

function partTokens(part: ContentPart): number {
  if (part.type === 'text' && typeof part.text === 'string') return countTextTokens(part.text);
  if (part.type === 'image_url') return (part as { image_url?: { detail?: string } }).image_url?.detail === 'low' ? IMAGE_LOW : IMAGE_DEFAULT;
  return countTextTokens(JSON.stringify(part));
}

/** Prompt tokens the request will be charged for, estimated. */
export function estimatePromptTokens(request: ChatRequest): number {
  let tokens = REPLY_PRIMING;
  for (const message of request.messages) {
    tokens += PER_MESSAGE;
    const content = message.content;
    if (typeof content === 'string') tokens += countTextTokens(content);
    else if (Array.isArray(content)) for (const part of content) tokens += partTokens(part);
    if (message.name) tokens += countTextTokens(message.name);
    for (const call of message.tool_calls ?? []) tokens += countTextTokens(call.function.name) + countTextTokens(call.function.arguments);
  }
  if (request.tools?.length) tokens += countTextTokens(JSON.stringify(request.tools));
  if (request.response_format?.type === 'json_schema') tokens += countTextTokens(JSON.stringify(request.response_format.json_schema));
  return tokens;
}

/**
 * A bound estimatePromptTokens never exceeds, without tokenizing: a token covers at least one byte
 * of the body, plus the per-message overhead and the flat image counts.
 */
export function promptTokensUpperBound(request: ChatRequest, bodyBytes: number): number {
  let images = 0;
  for (const message of request.messages) {
    if (Array.isArray(message.content)) for (const part of message.content) if (part.type === 'image_url') images++;
  }
  return bodyBytes + REPLY_PRIMING + PER_MESSAGE * request.messages.length + IMAGE_DEFAULT * images;
}

/** Whether the request needs a model that can see images. */
export function hasImages(request: ChatRequest): boolean {
  return request.messages.some((message) => Array.isArray(message.content) && message.content.some((part) => part.type === 'image_url'));
}
