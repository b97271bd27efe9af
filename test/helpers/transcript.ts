// Runs an SSE transcript through a provider's stream translator the way core does (core's SseParser,
// then event() per event and end() at the close), in pieces of a chosen size so framing split across
// reads is exercised. Returns the chunks produced before the end or the error, and the error.
import type { ChatChunk } from '../../core/chat-types.js';
import { SseParser } from '../../core/sse.js';
import type { StreamTranslator } from '../../providers/types.js';

export interface Replay {
  chunks: ChatChunk[];
  error: unknown;
}

export function replay(translator: StreamTranslator, transcript: string, pieceSize = transcript.length): Replay {
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

export function toCrlf(text: string): string {
  return text.replace(/\r\n/g, '\n').replace(/\n/g, '\r\n');
}

export function toLf(text: string): string {
  return text.replace(/\r\n/g, '\n');
}

/** The text a client would assemble from the chunks. */
export function textOf(chunks: ChatChunk[]): string {
  return chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
}

/** Chunks without their `created` timestamp, for deep comparison. */
export function withoutCreated(chunks: ChatChunk[]): Array<Omit<ChatChunk, 'created'>> {
  return chunks.map(({ created: _created, ...rest }) => rest);
}
