// Token estimates before a request is sent (routing on context windows, cost estimates, budget
// reservations, tokens per minute) and for output that arrived without a usage report. A BPE
// tokenizer is not used on this path: on adversarial input (long runs of rare CJK characters) it
// costs ~10 µs per character, so one request could stall the event loop for seconds. Instead a
// single linear pass weighs each character class, calibrated against OpenAI's o200k encoding (see
// test/core/tokens.test.ts): natural text in English, code, JSON, CJK, Cyrillic, Arabic, Devanagari
// and emoji lands within -25%..+45% of it. Bills always come from the provider's reported usage.
// Rules: 3 tokens per message plus 3 to prime the reply (OpenAI's documented overhead); an image
// counts 85 tokens at detail "low", 765 otherwise; a file counts 1 token per 100 bytes of its inline
// data (a PDF page of text and layout is some tens of KB and ~500-1000 tokens), 1000 when it is only
// referenced by id; audio 1 token per 1000 bytes (~16-32 tokens a second of mp3 or wav) — neither
// payload is ever read as text; at most 1M characters are scanned per request, the rest
// extrapolated at the rate seen so far (~15 ms of CPU at most).
import type { ChatRequest, ContentPart } from './chat-types.js';
import { textTokenBound } from './text-tokens.js';

const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;
const IMAGE_LOW = 85;
const IMAGE_DEFAULT = 765;
const SCAN_BUDGET = 1_000_000;
const FILE_BYTES_PER_TOKEN = 100;
const FILE_BY_ID = 1000;
const AUDIO_BYTES_PER_TOKEN = 1000;

/** Bound of the first `limit` characters of `text` (core/text-tokens.ts). */
function scan(text: string, limit: number): number {
  return textTokenBound(text, Math.min(text.length, limit));
}

/** Estimates one request's text within a scan budget shared by all its parts. */
class Estimate {
  tokens = 0;
  private budget = SCAN_BUDGET;

  text(text: string): void {
    const scanned = Math.min(text.length, this.budget);
    if (scanned > 0) {
      this.tokens += scan(text, scanned);
      this.budget -= scanned;
    }
    // Past the budget: the rest's UTF-8 bytes, the byte-level bound (an average rate would let the
    // text after the budget be anything).
    if (scanned < text.length) this.tokens += restBytes(text, scanned);
  }
}

/** UTF-8 bytes of `text` from `start` (native, no scan in JavaScript). */
function restBytes(text: string, start: number): number {
  return Buffer.byteLength(start === 0 ? text : text.slice(start), 'utf8');
}

/** Tokens one text may cost (e.g. generated output that came without a usage report). */
export function estimateTextTokens(text: string): number {
  const estimate = new Estimate();
  estimate.text(text);
  return Math.ceil(estimate.tokens);
}

/** Bytes of a base64 payload (a data: URL's included), without decoding it. */
function base64Bytes(data: unknown): number {
  if (typeof data !== 'string') return 0;
  const comma = data.startsWith('data:') ? data.indexOf(',') + 1 : 0;
  return Math.floor(((data.length - comma) * 3) / 4);
}

/** Flat tokens of a non-text part; its text (a file name) goes to the estimate. */
function part(estimate: Estimate, value: ContentPart): number {
  switch (value.type) {
    case 'text':
      if (typeof value.text === 'string') estimate.text(value.text);
      return 0;
    case 'image_url':
      return (value as { image_url?: { detail?: string } }).image_url?.detail === 'low' ? IMAGE_LOW : IMAGE_DEFAULT;
    case 'file': {
      const file = (value as { file?: { file_data?: unknown; filename?: unknown } }).file ?? {};
      if (typeof file.filename === 'string') estimate.text(file.filename);
      const bytes = base64Bytes(file.file_data);
      return bytes > 0 ? Math.ceil(bytes / FILE_BYTES_PER_TOKEN) : FILE_BY_ID;
    }
    case 'input_audio':
      return Math.ceil(base64Bytes((value as { input_audio?: { data?: unknown } }).input_audio?.data) / AUDIO_BYTES_PER_TOKEN);
    default:
      estimate.text(JSON.stringify(value));
      return 0;
  }
}

/** Prompt tokens the request will be charged for, estimated. */
export function estimatePromptTokens(request: ChatRequest): number {
  const estimate = new Estimate();
  let fixed = REPLY_PRIMING;
  for (const message of request.messages) {
    fixed += PER_MESSAGE;
    const content = message.content;
    if (typeof content === 'string') estimate.text(content);
    else if (Array.isArray(content)) for (const value of content) fixed += part(estimate, value);
    if (message.name) estimate.text(message.name);
    for (const call of message.tool_calls ?? []) {
      estimate.text(call.function.name);
      estimate.text(call.function.arguments);
    }
  }
  if (request.tools?.length) estimate.text(JSON.stringify(request.tools));
  if (request.response_format?.type === 'json_schema') estimate.text(JSON.stringify(request.response_format.json_schema));
  return fixed + Math.ceil(estimate.tokens);
}

/**
 * A bound estimatePromptTokens never exceeds, without scanning the text: no character (nor 100
 * bytes of file, 1000 of audio) weighs more than its UTF-8 bytes, plus the per-message overhead
 * and the flat image and file counts.
 */
export function promptTokensUpperBound(request: ChatRequest, bodyBytes: number): number {
  let flat = 0;
  for (const message of request.messages) {
    if (!Array.isArray(message.content)) continue;
    for (const value of message.content) {
      if (value.type === 'image_url') flat += IMAGE_DEFAULT;
      else if (value.type === 'file') flat += FILE_BY_ID;
    }
  }
  return bodyBytes + REPLY_PRIMING + PER_MESSAGE * request.messages.length + flat;
}

/** Whether the request needs a model that can see images. */
export function hasImages(request: ChatRequest): boolean {
  return request.messages.some((message) => Array.isArray(message.content) && message.content.some((value) => value.type === 'image_url'));
}
