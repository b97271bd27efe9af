// One cached answer and its stored bytes. A non-stream answer is kept as the completion, a streamed
// one as its chunks (so a replay keeps the original chunking); either is replayed in both forms.
// The first byte says how the JSON after it is stored — plain or brotli — so replicas with different
// MODELGATE_CACHE_COMPRESSION settings still read each other's entries.
import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';
import type { ChatChunk, ChatCompletion, Usage } from '../../core/chat-types.js';

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
}

const PLAIN = 0;
const BROTLI = 1;

// Quality 4 compresses JSON about as well as gzip -6 at several times its speed; encoding runs on
// the event loop (after the response was sent), so speed matters more than the last few percent.
const BROTLI_OPTIONS = { params: { [constants.BROTLI_PARAM_QUALITY]: 4, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT } };

export function encode(answer: CachedAnswer, compress: boolean): Buffer {
  const json = Buffer.from(JSON.stringify(answer), 'utf8');
  const body = compress ? brotliCompressSync(json, { ...BROTLI_OPTIONS, params: { ...BROTLI_OPTIONS.params, [constants.BROTLI_PARAM_SIZE_HINT]: json.length } }) : json;
  return Buffer.concat([Buffer.of(compress ? BROTLI : PLAIN), body]);
}

/** Undefined for bytes that are not an entry (a foreign or corrupted value): treated as a miss. */
export function decode(stored: Buffer): CachedAnswer | undefined {
  try {
    const format = stored[0];
    const body = stored.subarray(1);
    const json = format === BROTLI ? brotliDecompressSync(body) : format === PLAIN ? body : undefined;
    if (!json) return undefined;
    const answer = JSON.parse(json.toString('utf8')) as CachedAnswer;
    return answer.completion || answer.chunks ? answer : undefined;
  } catch {
    return undefined;
  }
}
