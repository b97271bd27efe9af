// Replays a provider's SSE transcript into its StreamTranslator the way core/attempt.ts does: bytes
// through the real SseParser, each event to `event()`, then `end()`. The bytes arrive in small
// pieces so events (and CRLF pairs) straddle reads, as they do on a real socket.
import { SseParser } from '../../core/sse.js';
import type { ChatChunk } from '../../core/chat-types.js';
import type { StreamTranslator } from '../../providers/types.js';

export function replay(translator: StreamTranslator, transcript: string, pieceSize = 7): ChatChunk[] {
  const parser = new SseParser();
  const chunks: ChatChunk[] = [];
  const bytes = Buffer.from(transcript, 'utf8');
  for (let i = 0; i < bytes.length; i += pieceSize) {
    for (const event of parser.push(bytes.subarray(i, i + pieceSize))) chunks.push(...translator.event(event));
  }
  for (const event of parser.end()) chunks.push(...translator.event(event));
  chunks.push(...translator.end());
  return chunks;
}

/** The same transcript with CRLF line endings. */
export function crlf(transcript: string): string {
  return transcript.replace(/\r?\n/g, '\r\n');
}

/** The text a client assembles from the chunks. */
export function streamedText(chunks: ChatChunk[]): string {
  return chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
}
