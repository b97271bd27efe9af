// Writing a successful answer in the API the client spoke: a chat completion as is, or as a
// Response (POST /v1/responses), or embeddings in the encoding asked for; a stream as chat chunks
// or as the Responses API's events. Failover and the cache both answer through here.
import type { OutgoingHttpHeaders } from 'node:http';
import type { ChatChunk, ChatCompletion } from './chat-types.js';
import type { RequestContext } from './context.js';
import type { EmbeddingsResponse } from './embeddings-types.js';
import type { ErrorBody } from './errors.js';
import { base64Vector } from './embeddings-request.js';
import { outcomeHeaders, sendCompletion, sendCompletionBytes, sendJson } from './respond.js';
import { SseWriter } from './sse.js';
import { responseOf, type ResponseFrame } from './responses/output.js';
import { ResponseEventWriter } from './responses/events.js';

/** What a stream is written through: chat chunks in, the client's framing out. */
export interface AnswerStream {
  start(status: number, headers: OutgoingHttpHeaders): void;
  /** `text`: the chunk's JSON when already known (as the provider sent it, core/chunk-text.ts). */
  send(chunk: ChatChunk, text?: string): void;
  /**
   * Several chunks known at once (a replayed stream): in one write where the framing allows. Not for
   * a live stream, whose events are each written as soon as they are parsed (core/attempt.ts).
   */
  sendAll(chunks: readonly ChatChunk[]): void;
  /** The stream is complete (a Response's is written once it is stored). */
  done(trailers?: Record<string, string>): void | Promise<void>;
  /** A failure after the first byte; `close` follows. */
  error(body: ErrorBody): void;
  close(trailers?: Record<string, string>): void;
}

/**
 * Writes a whole answer; a Response once it is stored (when `store`). `bytes`, when given, are
 * `completion` as the provider sent it: a chat answer is those bytes.
 */
export async function sendAnswer(ctx: RequestContext, completion: ChatCompletion, bytes?: Buffer): Promise<void> {
  const responses = ctx.chat?.responses;
  if (!responses) {
    if (!bytes) return sendCompletion(ctx, completion);
    ctx.outcome.completionJson = sendCompletionBytes(ctx, bytes) ? bytes : undefined;
    return;
  }
  const response = responseOf(frameOf(ctx), completion, ctx.outcome.usage);
  await responses.settle(response);
  sendJson(ctx, 200, response, outcomeHeaders(ctx));
}

export function answerStream(ctx: RequestContext): AnswerStream {
  const writer = new SseWriter(ctx.res);
  const responses = ctx.chat?.responses;
  if (!responses) return writer;
  return new ResponseEventWriter(writer, () => frameOf(ctx), () => ctx.outcome.usage, (response) => responses.settle(response));
}

export function sendEmbeddings(ctx: RequestContext, answer: EmbeddingsResponse): void {
  const base64 = ctx.chat?.embeddings?.encoding === 'base64';
  const body = base64 ? { ...answer, data: answer.data.map((entry) => ({ ...entry, embedding: base64Vector(entry.embedding) })) } : answer;
  sendJson(ctx, 200, body, outcomeHeaders(ctx));
}

/** The response's frame with the model that answers (the routed catalog id). */
function frameOf(ctx: RequestContext): ResponseFrame {
  const frame = ctx.chat!.responses!.frame;
  return { ...frame, model: ctx.outcome.target?.model.id ?? frame.model };
}
