// Token estimates before a request is sent (routing on context windows, cost estimates, budget
// reservations, tokens per minute) and for output that arrived without a usage report. The promise:
// an upper bound of the prompt tokens providers bill, so a reservation covers the bill. A BPE
// tokenizer is not used on this path (on adversarial input it costs ~10 µs per character: one
// request could stall the event loop for seconds); core/text-tokens.ts bounds each class of
// characters in one linear pass and counts ASCII words as the vocabularies merge them, each word
// at most 25 characters (~10-150 µs of CPU per KB, bench/tokens.ts). Measured
// (test/core/tokens-bound.test.ts): a seeded fuzz over adversarial text (whitespace, digits, CJK,
// combining marks, emoji sequences, base64, code, controls, random bytes and code points, long
// repeats, random and misspelled words, identifiers, contractions, letters beside digits and
// non-ASCII letters, mixtures) never finds o200k or cl100k above
// the estimate; this repository's English docs are over-reserved by ~11%, its TypeScript by ~24%;
// CJK, Cyrillic, Arabic and Devanagari text and emoji, weighed by their UTF-8 bytes, by 2-10x.
// Bills come from reported usage.
// Rules: 3 tokens per message, 1 per name, 3 to prime the reply (OpenAI's documented overhead);
// tools, response_format schemas and tool calls are estimated as JSON, which has more punctuation
// than the forms providers render them in; an image counts IMAGE_TOKENS (1600) whatever its detail (the
// most OpenAI's tile rule, 1445, and Anthropic's ~1600 count), and costs on models that bill more
// (gpt-4o-mini's ~48k, patch models, Gemini's tiles) add the rest: core/image-tokens.ts; a file counts 1 token per
// 100 bytes of its inline data, 1000 when referenced by id, audio 1 per 1000 bytes: neither
// payload is read, so these are typical rates, not bounds (a compressed PDF can hold any amount of
// text). At most 1M characters are scanned per request; the rest counts its UTF-8 bytes.
import type { ChatRequest, ContentPart } from './chat-types.js';
import { MERGE_BUDGET, textTokenBound, type MergeBudget } from './text-tokens.js';
import { IMAGE_TOKENS as IMAGE } from './image-tokens.js';

const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;
const PER_NAME = 1; // OpenAI's documented count for a message's name, besides the name's own tokens
const SCAN_BUDGET = 1_000_000;
const FILE_BYTES_PER_TOKEN = 100;
const FILE_BY_ID = 1000;
const AUDIO_BYTES_PER_TOKEN = 1000;


/** Estimates one request's text within a scan budget shared by all its parts. */
class Estimate {
  tokens = 0;
  private budget = SCAN_BUDGET;
  /** Letters merged into words, shared by all the request's parts too. */
  private readonly merges: MergeBudget = { letters: MERGE_BUDGET };

  text(text: string): void {
    const scanned = wordBoundaryBefore(text, Math.min(text.length, this.budget));
    if (scanned > 0) {
      this.tokens += textTokenBound(text, scanned, this.merges);
      this.budget -= scanned;
    }
    // Past the budget: the rest's UTF-8 bytes, the byte-level bound (an average rate would let the
    // text after the budget be anything).
    if (scanned < text.length) this.tokens += restBytes(text, scanned);
  }

  /**
   * A message's text parts. How a provider joins them is not documented (nothing between them, or a
   * separator), and BPE can cost more on "completion" + "s" joined than apart, or apart than joined:
   * the larger of the two, a separator counted between parts.
   */
  textParts(texts: readonly string[]): void {
    if (texts.length < 2) {
      for (const text of texts) this.text(text);
      return;
    }
    const start = this.tokens;
    for (const text of texts) this.text(text);
    const apart = this.tokens - start + texts.length - 1;
    this.tokens = start;
    this.text(texts.join(''));
    this.tokens = start + Math.max(apart, this.tokens - start);
  }
}

const LAST_WORD = 64;

/**
 * Where to stop scanning at most `limit`: not inside a word, whose end would then count apart from
 * it (" Completion" + "s" costs less than " Completions"): back to the last ASCII whitespace within
 * LAST_WORD characters, so the whole word goes to the byte-counted rest.
 */
function wordBoundaryBefore(text: string, limit: number): number {
  if (limit >= text.length) return limit;
  for (let i = limit; i > 0 && i > limit - LAST_WORD; i--) {
    const c = text.charCodeAt(i - 1);
    if (c === 32 || (c >= 9 && c <= 13)) return i - 1;
  }
  return limit;
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

/** Flat tokens of a part other than text (Estimate.textParts weighs those); its text (a file name) goes to the estimate. */
function part(estimate: Estimate, value: ContentPart): number {
  switch (value.type) {
    case 'image_url':
      return IMAGE;
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
    else if (Array.isArray(content)) {
      const texts: string[] = [];
      for (const value of content) {
        if (value.type === 'text') {
          if (typeof value.text === 'string') texts.push(value.text);
        } else fixed += part(estimate, value);
      }
      estimate.textParts(texts);
    }
    if (message.name) {
      fixed += PER_NAME;
      estimate.text(message.name);
    }
    if (typeof message.tool_call_id === 'string') estimate.text(message.tool_call_id);
    // A call as JSON: its name and arguments plus the punctuation around them, more than the
    // format the provider renders it in (like tools and schemas below).
    for (const call of message.tool_calls ?? []) estimate.text(JSON.stringify(call.function));
    // The deprecated single call of an assistant message, still accepted and billed.
    const legacyCall = (message as { function_call?: unknown }).function_call;
    if (legacyCall !== undefined && legacyCall !== null) estimate.text(JSON.stringify(legacyCall));
  }
  if (request.tools?.length) estimate.text(JSON.stringify(request.tools));
  // The deprecated form of tools.
  if (Array.isArray(request.functions) && request.functions.length > 0) estimate.text(JSON.stringify(request.functions));
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
      if (value.type === 'image_url') flat += IMAGE;
      else if (value.type === 'file') flat += FILE_BY_ID;
    }
  }
  return bodyBytes + REPLY_PRIMING + PER_MESSAGE * request.messages.length + flat;
}

/** Whether the request needs a model that can see images. */
export function hasImages(request: ChatRequest): boolean {
  return countImages(request) > 0;
}

/** The request's images (each estimated at IMAGE_TOKENS; core/image-tokens.ts says what models bill more). */
export function countImages(request: ChatRequest): number {
  let images = 0;
  for (const message of request.messages) {
    if (Array.isArray(message.content)) for (const value of message.content) if (value.type === 'image_url') images++;
  }
  return images;
}
