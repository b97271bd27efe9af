// A stream chunk's JSON as the provider sent it. When an adapter's translator returns a chunk exactly
// as parsed from one event's data (nothing added, changed or removed), it registers that text here;
// the SSE writer then sends it, and the cache stores it, instead of serializing the same object a
// second and a third time (the 24 chunks of the benchmark's stream: ~70 µs of JSON.stringify per
// request, docs/benchmarks.md). The completion's counterpart is receivedAsIs (core/provider.ts).
import type { ChatChunk } from './chat-types.js';

/**
 * Kept on the chunk itself, under symbols: JSON.stringify and Object.keys do not see them, and they
 * cost the garbage collector nothing (a WeakMap cost a stream ~9% more CPU than it saved: every
 * entry is an ephemeron each young-generation collection has to trace; a non-enumerable property
 * took ~0.6 µs per chunk to define). A spread copy carries both, but OWNER names the chunk the text
 * was registered for, so a copy — made to change something — has no text unless given its own.
 */
const TEXT = Symbol('modelgate.receivedText');
const OWNER = Symbol('modelgate.receivedTextOwner');

type WithText = ChatChunk & { [TEXT]?: string; [OWNER]?: ChatChunk };

/**
 * Registers `text` as `chunk`'s JSON; returns the chunk. Only a text that is one JSON object on one
 * line is kept: data spread over several `data:` lines joins with line feeds, and a line feed or a
 * carriage return (JSON whitespace) would break the client's SSE framing if written back. The chunk
 * must not be changed in place afterwards: its text would no longer be its JSON (a change is made
 * on a copy, which has no text).
 */
export function chunkReceivedAs(chunk: ChatChunk, text: string): ChatChunk {
  if (text.charCodeAt(0) === 0x7b && text.charCodeAt(text.length - 1) === 0x7d && text.indexOf('\n') === -1 && text.indexOf('\r') === -1) {
    (chunk as WithText)[TEXT] = text;
    (chunk as WithText)[OWNER] = chunk;
  }
  return chunk;
}

/** The chunk's JSON as received, if it was registered for this very object (not for one it was copied from). */
export function receivedText(chunk: ChatChunk): string | undefined {
  return (chunk as WithText)[OWNER] === chunk ? (chunk as WithText)[TEXT] : undefined;
}

const NULL_USAGE = '"usage":null';

/**
 * `text` (a chunk's JSON whose top-level `usage` is null) without that member, or undefined when
 * it cannot be cut out with certainty. The gateway asks OpenAI for usage on every stream, so each
 * chunk carries `"usage":null`, which a client that did not ask for usage must not see. The cut is
 * made when the text holds `"usage"` exactly once, right after `{` or `,`. Those seven characters are
 * either a key or the end of a string that ends in `"usage` (written `\"usage"`: a backslash
 * before, never `{` or `,`), so the occurrence is a key, and being the only one, the top-level key
 * the parsed chunk had — provided keys are written literally (not `"\u0075sage"`), as OpenAI's
 * serializer writes them (the trust answersAsSent places in the provider). Anything else (space
 * around the colon, a nested `usage` too, a key written twice) reads as undefined, and the chunk is
 * serialized instead.
 */
export function withoutNullUsage(text: string): string | undefined {
  const at = text.indexOf('"usage"');
  if (at === -1 || text.indexOf('"usage"', at + 1) !== -1 || !text.startsWith(NULL_USAGE, at)) return undefined;
  const end = at + NULL_USAGE.length;
  const before = text.charCodeAt(at - 1);
  if (before === 0x2c) return text.slice(0, at - 1) + text.slice(end); // ,"usage":null
  if (before !== 0x7b) return undefined;
  const after = text.charCodeAt(end);
  if (after === 0x2c) return text.slice(0, at) + text.slice(end + 1); // {"usage":null,…
  return after === 0x7d ? text.slice(0, at) + text.slice(end) : undefined; // {"usage":null}
}
