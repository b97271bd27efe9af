// One attempt to answer a chat request from one target, in two phases so failover stays possible:
// `openAttempt` sends the request and reads until the answer is usable — the whole completion, or
// for a stream its first content — and throws UpstreamError if the provider fails before that.
// Nothing has reached the client yet. Then the caller commits: sends the completion, or pipes the
// stream, after which a failure can only end the stream with an error event.
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { ChatChunk, ChatCompletion, Usage } from './chat-types.js';
import type { RequestContext, Target } from './context.js';
import { AbortedError, decodedBody, readBody, type Forwarder } from './proxy.js';
import { SseEventTooLarge, SseParser, type SseEvent } from './sse.js';
import { answerStream } from './answer.js';
import { GatewayError } from './errors.js';
import type { Cancellation } from './cancellation.js';
import type { EmbeddingsResponse } from './embeddings-types.js';
import { badResponse, connectionLost, isUpstreamError, timedOut, truncatedStream, unreachable, type UpstreamError } from './upstream-error.js';
import { baseHeaders, formatCost, outcomeHeaders } from './respond.js';
import { costOf } from './catalog.js';
import { isReceivedAsIs, type StreamTranslator, type TranslateContext } from './provider.js';
import { chunkReceivedAs, receivedText, withoutNullUsage } from './chunk-text.js';

const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
const MAX_ERROR_BYTES = 1024 * 1024;

export type Opened =
  /** `bytes`: the provider's body, when the adapter left the completion as it came (sent as they are). */
  | { kind: 'completion'; completion: ChatCompletion; bytes?: Buffer }
  | { kind: 'stream'; stream: UpstreamStream }
  | { kind: 'embeddings'; embeddings: EmbeddingsResponse };

/**
 * How this request is asked of this provider and its answer read: embeddings; a Responses request
 * to a provider with a Responses endpoint of its own (OpenAI); anything else as a chat completion
 * (a Responses request translated, core/responses/request.ts).
 */
function exchange(ctx: RequestContext, target: Target, context: TranslateContext) {
  const chat = ctx.chat!;
  const provider = target.provider;
  if (chat.embeddings) {
    if (!provider.embeddingsRequest || !provider.embeddingsResponse) {
      throw new GatewayError('bad_request', { param: 'model', message: `${provider.name} offers no embeddings.` });
    }
    const read = provider.embeddingsResponse.bind(provider);
    const extra = { inputs: chat.embeddings.inputs, estimatedTokens: chat.promptTokens };
    return { upstream: provider.embeddingsRequest(chat.embeddings.request, context), embeddings: (json: unknown) => read(json, { ...context, ...extra }) };
  }
  const responses = chat.responses;
  if (responses && provider.responsesRequest && provider.responsesResponse && provider.responsesStreamTranslator) {
    return {
      upstream: provider.responsesRequest(responses.request, responses.history, context),
      completion: (json: unknown) => provider.responsesResponse!(json, context),
      translator: () => provider.responsesStreamTranslator!(context),
    };
  }
  return {
    upstream: provider.chatRequest(chat.body, context),
    completion: (json: unknown) => provider.chatResponse(json, context),
    translator: () => provider.streamTranslator(context),
  };
}

export async function openAttempt(ctx: RequestContext, target: Target, forwarder: Forwarder, signal: Cancellation): Promise<Opened> {
  const chat = ctx.chat!;
  const context: TranslateContext = { model: target.model, stream: chat.stream, requestId: ctx.id };
  const how = exchange(ctx, target, context);
  const upstream = how.upstream;
  const name = target.provider.name;
  const started = performance.now();
  try {
    const response = await forwarder.send(ctx.req, ctx.res, upstream, signal).catch((error: Error) => {
      throw transportError(name, error, signal, false);
    });
    const status = response.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      const text = await readBody(response, MAX_ERROR_BYTES, signal).then(
        (buffer) => buffer.toString('utf8'),
        () => '',
      );
      throw target.provider.error(status, response.headers, text);
    }
    if (!chat.stream) {
      const buffer = await readBody(response, MAX_RESPONSE_BYTES, signal).catch((error: Error) => {
        throw transportError(name, error, signal, true);
      });
      let json: unknown;
      try {
        json = JSON.parse(buffer.toString('utf8'));
      } catch {
        throw badResponse(name, 'the body is not JSON');
      }
      if (how.embeddings) return { kind: 'embeddings', embeddings: how.embeddings(json) };
      const completion = how.completion!(json);
      // Bytes framed by the object's own braces only (no whitespace around it: what the cache checks
      // an entry by), and valid UTF-8: what the gateway parsed had any invalid sequence replaced
      // (U+FFFD), and the client must read that same text.
      const asSent = isReceivedAsIs(completion) && buffer[0] === 0x7b && buffer[buffer.length - 1] === 0x7d && isUtf8(buffer);
      return asSent ? { kind: 'completion', completion, bytes: buffer } : { kind: 'completion', completion };
    }
    if (!String(response.headers['content-type'] ?? '').includes('text/event-stream')) {
      response.destroy();
      throw badResponse(name, `a stream was requested but the content-type is ${String(response.headers['content-type'])}`);
    }
    const stream = new UpstreamStream(ctx, name, response, how.translator!());
    await stream.prime(signal);
    return { kind: 'stream', stream };
  } finally {
    ctx.outcome.upstreamMs += performance.now() - started;
  }
}

/** A provider's stream, read up to its first content; `pipe` sends it on to the client. */
export class UpstreamStream {
  private readonly parser = new SseParser();
  private readonly iterator: AsyncIterator<Buffer>;
  private readonly pending: ChatChunk[] = [];
  /**
   * What this attempt generated, and its chunks (when the cache collects them), kept here until the
   * stream commits: an attempt that fails before its first byte reached the client (content and an
   * error event in one read, say) must leave nothing on the outcome — its text was neither sent,
   * cached nor billed. `pipe` moves them over; from then on `take` writes to the outcome directly.
   */
  private generated: string[] = [];
  private chunks: ChatChunk[] = [];
  private committed = false;
  private hasContent = false;
  private ended = false;
  /** Content chunks written after the first, and when the first and last were written. */
  private gaps = 0;
  private firstWrite = 0;
  private lastWrite = 0;

  constructor(
    private readonly ctx: RequestContext,
    private readonly provider: string,
    private readonly response: IncomingMessage,
    private readonly translator: StreamTranslator,
  ) {
    this.iterator = decodedBody(response)[Symbol.asyncIterator]();
  }

  /** Drops the stream without sending anything (nobody will read it). */
  cancel(): void {
    this.response.destroy();
  }

  /** Reads until the first content (or the end). Throws UpstreamError; nothing is sent. */
  async prime(signal: Cancellation): Promise<void> {
    const onAbort = () => this.response.destroy(new AbortedError('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      while (!this.hasContent && !this.ended) await this.read();
    } catch (error) {
      this.response.destroy();
      throw isUpstreamError(error) ? error : transportError(this.provider, error as Error, signal, true);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Commits: writes the headers and what was read, then the rest as it arrives. A failure from
   * here on ends the stream with OpenAI's error event; a client that leaves stops the upstream.
   * Resolves when the stream is over — with the provider's failure if it broke after the first
   * byte; never throws.
   */
  async pipe(idleTimeoutMs: number): Promise<UpstreamError | undefined> {
    const target = this.ctx.outcome.target!;
    const { ctx } = this;
    const writer = answerStream(ctx);
    this.commit();
    ctx.outcome.ttftMs = performance.now() - ctx.startedAt;
    ctx.status = 200;
    writer.start(200, { ...baseHeaders(ctx), ...outcomeHeaders(ctx), trailer: 'x-modelgate-cost' });
    // Each event is written as soon as it is parsed, in a write of its own: events the upstream sent
    // apart must not reach the client as one (a write for all of one read's events arrived coalesced
    // at the client for ~1% of paced chunks, docs/benchmarks.md).
    const flush = () => {
      for (const chunk of this.pending.splice(0)) {
        const sent = this.outgoing(chunk);
        if (sent) writer.send(sent, receivedText(sent));
      }
    };
    flush();
    const onClientGone = () => this.response.destroy(new AbortedError('client disconnected'));
    ctx.signal.addEventListener('abort', onClientGone, { once: true });
    // One timer for the whole stream, pushed back after every read.
    const idle = setTimeout(() => this.response.destroy(timedOut(this.provider, idleTimeoutMs)), idleTimeoutMs);
    const started = performance.now();
    try {
      while (!this.ended) {
        await this.read();
        idle.refresh();
        flush();
      }
      flush();
      recordUsage(ctx, target, this.translator.usage);
      await writer.done(ctx.outcome.cost === undefined ? undefined : { 'x-modelgate-cost': formatCost(ctx.outcome.cost) });
    } catch (error) {
      flush();
      recordUsage(ctx, target, this.translator.usage);
      if (ctx.signal.aborted) {
        ctx.outcome.interrupted = 'client_abort';
      } else {
        ctx.outcome.interrupted = 'upstream_error';
        const transport = isUpstreamError(error) ? error : transportError(this.provider, error as Error, ctx.signal, true);
        const failure = isUpstreamError(transport) ? transport : connectionLost(this.provider, transport);
        ctx.outcome.streamFailure = { provider: this.provider, reason: failure.reason, message: failure.message };
        writer.error(failure.toBody());
        writer.close();
        this.response.destroy();
        return failure;
      }
      this.response.destroy();
    } finally {
      clearTimeout(idle);
      ctx.signal.removeEventListener('abort', onClientGone);
      ctx.outcome.upstreamMs += performance.now() - started;
    }
  }

  private async read(): Promise<void> {
    const next = await this.iterator.next();
    let events: SseEvent[];
    try {
      events = next.done ? this.parser.end() : this.parser.push(next.value);
    } catch (error) {
      if (error instanceof SseEventTooLarge) throw badResponse(this.provider, error.message);
      throw error;
    }
    for (const event of events) {
      for (const chunk of this.translator.event(event)) this.take(chunk);
    }
    if (!next.done) return;
    for (const chunk of this.translator.end()) this.take(chunk);
    this.ended = true;
    if (!this.translator.finished) {
      throw truncatedStream(this.provider);
    }
  }

  /** This attempt is the answer: what it generated so far goes on the outcome, and the rest follows. */
  private commit(): void {
    if (this.committed) return;
    this.committed = true;
    const outcome = this.ctx.outcome;
    outcome.generated.push(...this.generated);
    this.generated = outcome.generated;
    if (this.ctx.collectChunks) {
      (outcome.chunks ??= []).push(...this.chunks);
      this.chunks = outcome.chunks;
    }
  }

  /** Takes a translated chunk as it is: never changed in place (it may carry its provider's text, core/chunk-text.ts). */
  private take(chunk: ChatChunk): void {
    for (const choice of chunk.choices) {
      const delta = choice.delta;
      if (delta.content) this.generated.push(delta.content);
      if (delta.tool_calls) for (const call of delta.tool_calls) if (call.function?.arguments) this.generated.push(call.function.arguments);
      if (!this.hasContent && (delta.content || delta.tool_calls?.length || delta.refusal || choice.finish_reason)) this.hasContent = true;
    }
    if (this.ctx.collectChunks) this.chunks.push(chunk);
    this.pending.push(chunk);
  }

  /** The chunk as the client gets it (undefined: not sent), its content's write time noted. */
  private outgoing(chunk: ChatChunk): ChatChunk | undefined {
    if (!this.ctx.chat!.includeUsage) {
      if (chunk.choices.length === 0 && chunk.usage) return undefined;
      if (chunk.usage !== undefined) {
        // The provider's text, if kept, loses the member too. (`usage: undefined`, which JSON leaves
        // out, rather than a delete: the copy's symbols follow `usage`, and deleting a property
        // that is not the last turns the object into a slow dictionary.)
        const text = chunk.usage === null ? receivedText(chunk) : undefined;
        chunk = { ...chunk, usage: undefined };
        const cut = text === undefined ? undefined : withoutNullUsage(text);
        if (cut !== undefined) chunkReceivedAs(chunk, cut);
      }
    }
    if (chunk.choices.some((choice) => choice.delta.content || choice.delta.tool_calls)) {
      const now = performance.now();
      if (this.firstWrite === 0) this.firstWrite = now;
      else this.gaps++;
      this.lastWrite = now;
      if (this.gaps > 0) this.ctx.outcome.interTokenMs = (this.lastWrite - this.firstWrite) / this.gaps;
    }
    return chunk;
  }
}

/** Puts the usage reported by the provider, and what it costs at catalog prices, on the outcome. */
export function recordUsage(ctx: RequestContext, target: Target, usage: Usage | undefined): void {
  ctx.outcome.usage = usage;
  ctx.outcome.cost = usage ? costOf(target.model, usage) : undefined;
}

/**
 * A failure below HTTP: the client left (rethrown as is), a timeout, or a connection problem —
 * before the provider answered (`answered` false: it could not be reached) or while it was
 * answering (the connection broke mid-answer).
 */
function transportError(provider: string, error: Error, signal: Cancellation, answered: boolean): Error {
  if (isUpstreamError(error)) return error;
  if (error instanceof AbortedError || error.name === 'AbortError') {
    const reason = signal.reason as { name?: string } | undefined;
    if (reason?.name === 'TimeoutError' || reason?.name === 'TaskCancelledError') return timedOut(provider);
    return error instanceof AbortedError ? error : new AbortedError(error.message);
  }
  return answered ? connectionLost(provider, error) : unreachable(provider, error);
}
