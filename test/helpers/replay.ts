// Replays a provider's SSE transcript into its StreamTranslator the way core/attempt.ts does: bytes
// through the real SseParser, each event to `event()`, then `end()`. The bytes arrive in small
// pieces so events (and CRLF pairs) straddle reads, as they do on a real socket. Also the framing
// and comparison helpers the provider tests share.
import { SseParser } from '../../core/sse.js';
import type { ChatChunk } from '../../core/chat-types.js';
import type { StreamTranslator } from '../../core/provider.js';

export interface Replay {
  chunks: ChatChunk[];
  /** What the translator threw; undefined when the transcript ran to its end. */
  error: unknown;
}

/** The chunks produced before the end or the error, and the error: for transcripts that may fail midway. */
export function replayUntilError(translator: StreamTranslator, transcript: string, pieceSize = 7): Replay {
  const parser = new SseParser();
  const chunks: ChatChunk[] = [];
  const bytes = Buffer.from(transcript, 'utf8');
  try {
    for (let offset = 0; offset < bytes.length; offset += pieceSize) {
      for (const event of parser.push(bytes.subarray(offset, offset + pieceSize))) chunks.push(...translator.event(event));
    }
    for (const event of parser.end()) chunks.push(...translator.event(event));
    chunks.push(...translator.end());
    return { chunks, error: undefined };
  } catch (error) {
    return { chunks, error };
  }
}

/** The chunks of the whole transcript; an error the translator throws is thrown. */
export function replay(translator: StreamTranslator, transcript: string, pieceSize = 7): ChatChunk[] {
  const { chunks, error } = replayUntilError(translator, transcript, pieceSize);
  if (error !== undefined) throw error;
  return chunks;
}

/** The same transcript with CRLF line endings. */
export function toCrlf(transcript: string): string {
  return transcript.replace(/\r?\n/g, '\r\n');
}

/** The same transcript with LF line endings. */
export function toLf(transcript: string): string {
  return transcript.replace(/\r\n/g, '\n');
}

/** The text a client assembles from the chunks. */
export function streamedText(chunks: ChatChunk[]): string {
  return chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
}

/** Chunks without their `created` timestamp, for deep comparison. */
export function withoutCreated(chunks: ChatChunk[]): Array<Omit<ChatChunk, 'created'>> {
  return chunks.map(({ created: _created, ...rest }) => rest);
}
