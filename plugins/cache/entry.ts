// One cached answer and its stored bytes. A non-stream answer is kept as the completion, a streamed
// one as its chunks (so a replay keeps the original chunking); either is replayed in both forms.
// The first byte says how the rest is stored, so replicas with different MODELGATE_CACHE_COMPRESSION
// settings still read each other's entries:
//   0 / 1: the answer's JSON, plain / brotli (stored by earlier versions; still read);
//   2 / 3: plain / brotli of [head length, 4 bytes BE][head JSON][completion JSON] — the completion
//          as the client received it, kept apart so a hit writes those bytes as they are instead of
//          parsing and serializing them again (the head holds the rest: provider, model, usage, cost).
// An entry of a format a replica does not know reads as a miss (an older replica during an upgrade).
import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';
import type { ChatChunk, ChatCompletion, Usage } from '../../core/chat-types.js';
import type { EmbeddingsResponse } from '../../core/embeddings-types.js';
import { receivedText } from '../../core/chunk-text.js';

export interface CachedAnswer {
  /** The provider and catalog model that produced it, for the response headers and metrics. */
  provider: string;
  model: string;
  usage?: Usage;
  /** What the answer cost when it was generated: what each hit saves. */
  costUsd?: number;
  completion?: ChatCompletion;
  /** The chunks as the provider's stream produced them, the usage-only chunk excluded. */
  chunks?: ChatChunk[];
  /** An embeddings answer: float vectors (served in either encoding). */
  embeddings?: EmbeddingsResponse;
}

/** A cached answer as read back: a completion stored apart comes as its bytes, parsed only when needed. */
export interface StoredAnswer extends CachedAnswer {
  /** The completion's JSON exactly as first sent (formats 2 and 3); `completion` is then undefined. */
  completionBytes?: Buffer;
}

const PLAIN = 0;
const BROTLI = 1;
const PLAIN_SPLIT = 2;
const BROTLI_SPLIT = 3;
const HEAD_LENGTH_BYTES = 4;
/**
 * Smaller answers are stored plain: a sync brotli call builds a zlib stream object and costs
 * ~15-40 µs of a miss's CPU whatever the size (docs/benchmarks.md: ~4% of the gateway's time when
 * every answer was compressed), and under 2 KB it saves a few hundred bytes, less than an entry's
 * fixed cost — a poor trade on every cache miss.
 */
export const COMPRESS_FROM_BYTES = 2048;

/**
 * The stored bytes: a format byte, then the JSON, plain or brotli. Short-lived (the memory backend
 * copies them into its blocks, Redis sends them), so small ones come from Node's pool, not malloc.
 * `completionJson`, when given, is `answer.completion` as already serialized for the client: it is
 * spliced in rather than serialized a second time.
 */
export function encode(answer: CachedAnswer, compress: boolean, completionJson?: string | Buffer): Buffer {
  const split = answer.completion !== undefined && completionJson !== undefined;
  const head = split ? headJson(answer) : answer.chunks ? chunksJson(answer, answer.chunks) : JSON.stringify(answer);
  const headBytes = Buffer.byteLength(head);
  const length = split ? HEAD_LENGTH_BYTES + headBytes + Buffer.byteLength(completionJson) : headBytes;
  const small = !compress || length < COMPRESS_FROM_BYTES;
  const out = Buffer.allocUnsafe(small ? 1 + length : length);
  // Written in place: into the entry itself, or into the buffer brotli reads (without the format byte).
  let at = small ? 1 : 0;
  if (split) at = out.writeUInt32BE(headBytes, at);
  at += out.write(head, at, 'utf8');
  if (split) {
    if (typeof completionJson === 'string') out.write(completionJson, at, 'utf8');
    else completionJson.copy(out, at);
  }
  if (small) {
    out[0] = split ? PLAIN_SPLIT : PLAIN;
    return out;
  }
  // Encoding runs on the event loop after the response was sent, on every miss: quality 1 takes
  // ~15 µs for a 1 KB answer in isolation and ~40 µs of the gateway's CPU per miss under load
  // (docs/benchmarks.md); quality 5 takes ~1.5x that for ~15% fewer bytes, the top qualities
  // milliseconds. It still shrinks JSON several times.
  const params = { [constants.BROTLI_PARAM_QUALITY]: 1, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT, [constants.BROTLI_PARAM_SIZE_HINT]: length };
  const packed = brotliCompressSync(out, { params });
  const entry = Buffer.allocUnsafe(1 + packed.length);
  entry[0] = split ? BROTLI_SPLIT : BROTLI;
  packed.copy(entry, 1);
  return entry;
}

/** The answer's own fields: a completion is stored after them, chunks are spliced in (chunksJson). */
function headJson(answer: CachedAnswer): string {
  // Named, not a rest copy without `completion` (which V8 runs as a slow generic copy): besides its
  // completion or its chunks, these are all of an answer's fields.
  return JSON.stringify({ provider: answer.provider, model: answer.model, usage: answer.usage, costUsd: answer.costUsd });
}

/**
 * A streamed answer's JSON: the chunks' texts as the provider sent them (core/chunk-text.ts), when
 * every chunk has one, spliced in rather than serialized again (the same JSON, read the same way).
 */
function chunksJson(answer: CachedAnswer, chunks: readonly ChatChunk[]): string {
  // The head below names every field a streamed answer has (cache.ts storable): anything more is serialized whole.
  if (answer.completion !== undefined || answer.embeddings !== undefined) return JSON.stringify(answer);
  const texts: string[] = [];
  for (const chunk of chunks) {
    const text = receivedText(chunk);
    if (text === undefined) return JSON.stringify(answer);
    texts.push(text);
  }
  return `${headJson(answer).slice(0, -1)},"chunks":[${texts.join(',')}]}`;
}

/** Undefined for bytes that are not an entry (a foreign or corrupted value): treated as a miss. */
export function decode(stored: Buffer): StoredAnswer | undefined {
  try {
    const format = stored[0];
    const body = stored.subarray(1);
    if (format === PLAIN_SPLIT || format === BROTLI_SPLIT) return split(format === BROTLI_SPLIT ? brotliDecompressSync(body) : body);
    const json = format === BROTLI ? brotliDecompressSync(body) : format === PLAIN ? body : undefined;
    if (!json) return undefined;
    return whole(JSON.parse(json.toString('utf8')) as CachedAnswer);
  } catch {
    return undefined;
  }
}

function split(bytes: Buffer): StoredAnswer | undefined {
  const headEnd = HEAD_LENGTH_BYTES + bytes.readUInt32BE(0);
  if (headEnd >= bytes.length) return undefined;
  const head = JSON.parse(bytes.toString('utf8', HEAD_LENGTH_BYTES, headEnd)) as StoredAnswer;
  // The head of a completion entry holds no answer of its own.
  if (head.completion || head.chunks || head.embeddings) return undefined;
  // The completion is written to clients as it is: bytes that are not a JSON object read as a miss.
  if (bytes[headEnd] !== 0x7b || bytes[bytes.length - 1] !== 0x7d) return undefined;
  head.completionBytes = bytes.subarray(headEnd);
  return head;
}

function whole(answer: CachedAnswer): CachedAnswer | undefined {
  return answer.completion || answer.chunks || answer.embeddings ? answer : undefined;
}

/** The stored completion, parsed (for a stream, a Response, a log line); undefined when there is none. */
export function storedCompletion(answer: StoredAnswer): ChatCompletion | undefined {
  if (answer.completion || !answer.completionBytes) return answer.completion;
  answer.completion = JSON.parse(answer.completionBytes.toString('utf8')) as ChatCompletion;
  return answer.completion;
}
