// One cached answer and its stored bytes. A non-stream answer is kept as the completion, a streamed
// one as its chunks (so a replay keeps the original chunking); either is replayed in both forms.
// The first byte says how the JSON after it is stored — plain or brotli — so replicas with different
// MODELGATE_CACHE_COMPRESSION settings still read each other's entries.
import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';
import type { ChatChunk, ChatCompletion, Usage } from '../../core/chat-types.js';
import type { EmbeddingsResponse } from '../../core/embeddings-types.js';

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

const PLAIN = 0;
const BROTLI = 1;
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
export function encode(answer: CachedAnswer, compress: boolean, completionJson?: string): Buffer {
  const json = answerJson(answer, completionJson);
  const length = Buffer.byteLength(json);
  if (!compress || length < COMPRESS_FROM_BYTES) {
    const out = Buffer.allocUnsafe(1 + length);
    out[0] = PLAIN;
    out.write(json, 1, 'utf8');
    return out;
  }
  // Encoding runs on the event loop after the response was sent, on every miss: quality 1 takes
  // ~15 µs for a 1 KB answer in isolation and ~40 µs of the gateway's CPU per miss under load
  // (docs/benchmarks.md); quality 5 takes ~1.5x that for ~15% fewer bytes, the top qualities
  // milliseconds. It still shrinks JSON several times.
  const params = { [constants.BROTLI_PARAM_QUALITY]: 1, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT, [constants.BROTLI_PARAM_SIZE_HINT]: length };
  const packed = brotliCompressSync(json, { params });
  const out = Buffer.allocUnsafe(1 + packed.length);
  out[0] = BROTLI;
  packed.copy(out, 1);
  return out;
}

function answerJson(answer: CachedAnswer, completionJson: string | undefined): string {
  if (!answer.completion || completionJson === undefined) return JSON.stringify(answer);
  const { completion: _sent, ...rest } = answer;
  const head = JSON.stringify(rest);
  return `${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"completion":${completionJson}}`;
}

/** Undefined for bytes that are not an entry (a foreign or corrupted value): treated as a miss. */
export function decode(stored: Buffer): CachedAnswer | undefined {
  try {
    const format = stored[0];
    const body = stored.subarray(1);
    const json = format === BROTLI ? brotliDecompressSync(body) : format === PLAIN ? body : undefined;
    if (!json) return undefined;
    const answer = JSON.parse(json.toString('utf8')) as CachedAnswer;
    return answer.completion || answer.chunks || answer.embeddings ? answer : undefined;
  } catch {
    return undefined;
  }
}
