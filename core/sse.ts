// Server-sent events, both directions. SseParser turns upstream bytes into events (LF, CRLF and CR
// framing, UTF-8 split across chunks, comments ignored, an event bounded at 16 Mi characters so a
// stream without line breaks cannot grow memory without limit); SseWriter writes OpenAI-style data-only
// events to the client. Every stream in the gateway goes through these two.
import { StringDecoder } from 'node:string_decoder';
import type { ServerResponse, OutgoingHttpHeaders } from 'node:http';
import { writableHeaders } from './header-values.js';

export interface SseEvent {
  event: string | undefined;
  data: string;
  id: string | undefined;
}

/** Largest event (its unfinished line plus the data lines so far), in characters: 16 Mi. */
export const MAX_EVENT_CHARS = 16 * 1024 * 1024;

/** The stream holds a line or event larger than the parser's limit: it is not a stream we can relay. */
export class SseEventTooLarge extends Error {
  override name = 'SseEventTooLarge';
  constructor(limit: number) {
    super(`an event larger than ${limit} characters`);
  }
}

export class SseParser {
  private readonly decoder = new StringDecoder('utf8');
  /** The unfinished line: `buffer` followed by `pending`, chunks without a line end not joined yet. */
  private buffer = '';
  private pending: string[] = [];
  private pendingChars = 0;
  private data: string[] = [];
  /** Characters in `data`. */
  private dataChars = 0;
  private event: string | undefined;
  private id: string | undefined;
  private skipLeadingLf = false;

  /** `maxEventChars` bounds what one event may hold in memory; beyond it push/end throw SseEventTooLarge. */
  constructor(private readonly maxEventChars = MAX_EVENT_CHARS) {}

  /** Feeds a chunk of the stream; returns the events it completed. Throws SseEventTooLarge. */
  push(chunk: Buffer | string): SseEvent[] {
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    let events: SseEvent[] = [];
    if (text.indexOf('\n') === -1 && text.indexOf('\r') === -1) {
      // Only the unfinished line grows (a multi-megabyte event arriving in many reads): keep the
      // piece aside rather than copy and rescan the whole line on every read.
      this.pending.push(text);
      this.pendingChars += text.length;
    } else {
      const from = this.buffer.length + this.pendingChars;
      this.buffer = this.joined() + text;
      events = this.drain(false, from);
    }
    // What is left is an unfinished line of the current event.
    if (this.buffer.length + this.pendingChars + this.dataChars > this.maxEventChars) this.overflow();
    return events;
  }

  /** The unfinished line as one string (and `pending` emptied). */
  private joined(): string {
    if (this.pending.length === 0) return this.buffer;
    const line = this.buffer + this.pending.join('');
    this.pending = [];
    this.pendingChars = 0;
    return line;
  }

  private overflow(): never {
    this.buffer = '';
    this.pending = [];
    this.pendingChars = 0;
    this.data = [];
    this.dataChars = 0;
    throw new SseEventTooLarge(this.maxEventChars);
  }

  /** The stream ended: a final event without its blank line still counts. */
  end(): SseEvent[] {
    const from = this.buffer.length + this.pendingChars;
    this.buffer = this.joined() + this.decoder.end();
    const events = this.drain(true, from);
    if (this.data.length > 0) events.push(this.dispatch());
    return events;
  }

  /** Dispatches the complete lines of `buffer`; the first `from` characters hold no line end. */
  private drain(final: boolean, from: number): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    const text = this.buffer;
    for (let i = from; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      if (c === 10 && this.skipLeadingLf && i === start) {
        // the LF of a CRLF whose CR ended the previous chunk
        this.skipLeadingLf = false;
        start = i + 1;
        continue;
      }
      this.skipLeadingLf = false;
      const line = text.slice(start, i);
      if (c === 13) {
        if (i + 1 < text.length) {
          if (text.charCodeAt(i + 1) === 10) i++;
        } else {
          this.skipLeadingLf = true;
        }
      }
      start = i + 1;
      const event = this.line(line);
      if (event) events.push(event);
    }
    this.buffer = text.slice(start);
    if (final && this.buffer !== '') {
      const event = this.line(this.buffer);
      this.buffer = '';
      if (event) events.push(event);
    }
    return events;
  }

  private line(line: string): SseEvent | undefined {
    if (line === '') {
      if (this.data.length > 0) return this.dispatch();
      this.event = undefined; // an event with no data is not dispatched (WHATWG SSE)
      return undefined;
    }
    if (line.charCodeAt(0) === 58) return undefined; // ":" comment / keep-alive
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') {
      this.data.push(value);
      this.dataChars += value.length + 1;
      if (this.dataChars > this.maxEventChars) this.overflow();
    }
    else if (field === 'event') this.event = value;
    else if (field === 'id') this.id = value;
    return undefined;
  }

  private dispatch(): SseEvent {
    const event = { event: this.event, data: this.data.join('\n'), id: this.id };
    this.data = [];
    this.dataChars = 0;
    this.event = undefined;
    return event;
  }
}

export const SSE_HEADERS: OutgoingHttpHeaders = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
};

/** Writes data-only SSE to the client in OpenAI's framing, ending with `data: [DONE]`. */
export class SseWriter {
  private ended = false;
  constructor(private readonly res: ServerResponse) {}

  get open(): boolean {
    return !this.ended && !this.res.destroyed && this.res.writable;
  }

  /**
   * Header values that are not printable ASCII are percent-encoded (see core/respond.ts headerValue).
   * The headers are not flushed on their own: every caller writes its first event in the same tick,
   * and Node sends them together in one write (a write of their own cost the first token ~0.1 ms).
   */
  start(status: number, headers: OutgoingHttpHeaders): void {
    this.res.writeHead(status, writableHeaders({ ...headers, ...SSE_HEADERS }));
  }

  /** One event; `payload` is a JSON value or an already serialized JSON string, or `text` is its JSON. */
  send(payload: unknown, text?: string): void {
    if (!this.open) return;
    this.res.write(`data: ${text ?? (typeof payload === 'string' ? payload : JSON.stringify(payload))}\n\n`);
  }

  /**
   * Several events known at once (a replayed stream) in one write: one chunk of the chunked
   * encoding and one entry of the socket's writev instead of three each per event. A live stream
   * sends each event on its own: written together, events the upstream sent apart arrive as one.
   */
  sendAll(payloads: readonly unknown[]): void {
    if (!this.open || payloads.length === 0) return;
    let text = '';
    for (const payload of payloads) text += `data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`;
    this.res.write(text);
  }

  /** One named event (`event: <name>`), the Responses API's framing. */
  sendEvent(name: string, payload: unknown): void {
    if (!this.open) return;
    this.res.write(`event: ${name}\ndata: ${JSON.stringify(payload)}\n\n`);
  }

  /** OpenAI's mid-stream error event: the SDK throws APIError on a payload with an `error` key. */
  error(body: unknown): void {
    this.send(body);
  }

  done(trailers?: Record<string, string>): void {
    if (!this.open) return;
    this.ended = true;
    this.res.write('data: [DONE]\n\n');
    if (trailers) this.res.addTrailers(trailers);
    this.res.end();
  }

  /** Ends the stream without [DONE] (after an error event). */
  close(trailers?: Record<string, string>): void {
    if (!this.open) return;
    this.ended = true;
    if (trailers) this.res.addTrailers(trailers);
    this.res.end();
  }
}
