// A streamed Response: the chat chunks the pipeline produces (from any provider, or the cache)
// written as the Responses API's typed events, in OpenAI's order — response.created and
// response.in_progress; per output item output_item.added, then for text content_part.added,
// output_text.delta… output_text.done, content_part.done, and for a function call
// function_call_arguments.delta… .done; output_item.done for each, before the next item is added;
// then response.completed (or
// response.incomplete) carrying the whole Response with its usage. Each event is framed
// `event: <type>` + `data: <json>` with sequence_number 0, 1, 2…, and no `[DONE]`. A failure after
// the first event is an `error` event followed by response.failed, as OpenAI sends them.
import type { OutgoingHttpHeaders } from 'node:http';
import type { ChatChunk, Usage } from '../chat-types.js';
import type { ErrorBody } from '../errors.js';
import type { SseWriter } from '../sse.js';
import { finished, newId, responseShell, type ResponseFrame } from './output.js';
import type { OutputItem, OutputMessage, ResponseObject } from './types.js';

interface OpenText {
  kind: 'text' | 'refusal';
  index: number;
  value: string;
}

interface OpenItem {
  outputIndex: number;
  item: OutputItem;
  /** Its done events were sent: OpenAI closes an item before it adds the next. */
  closed: boolean;
  /** Message items: the content part being written (text, or refusal). */
  parts: OpenText[];
}

/** An open item as it stands, its parts so far included (it stays in_progress). */
function snapshot(open: OpenItem): OutputItem {
  if (open.item.type !== 'message') return { ...open.item };
  const content = open.parts.map((part) =>
    part.kind === 'text' ? { type: 'output_text' as const, text: part.value, annotations: [], logprobs: [] } : { type: 'refusal' as const, refusal: part.value },
  );
  return { ...open.item, content };
}

export class ResponseEventWriter {
  private sequence = 0;
  private readonly items: OpenItem[] = [];
  private message: OpenItem | undefined;
  /** Function-call items by the chat chunk's tool-call index. */
  private readonly calls = new Map<number, OpenItem>();
  private finish: string | null = null;

  /**
   * `frame()` is read when the stream starts (the model is known then); `usage()` when it ends;
   * `settle` receives the finished Response (to store it) before its last event is written.
   */
  constructor(
    private readonly writer: SseWriter,
    private readonly frame: () => ResponseFrame,
    private readonly usage: () => Usage | undefined,
    private readonly settle: (response: ResponseObject) => void | Promise<void>,
  ) {}

  start(status: number, headers: OutgoingHttpHeaders): void {
    this.writer.start(status, headers);
    const shell = responseShell(this.frame());
    this.emit({ type: 'response.created', response: shell });
    this.emit({ type: 'response.in_progress', response: shell });
  }

  send(chunk: ChatChunk): void {
    const choice = chunk.choices.find((c) => c.index === 0);
    if (!choice) return;
    const delta = choice.delta;
    if (typeof delta.content === 'string' && delta.content !== '') this.text('text', delta.content);
    if (typeof delta.refusal === 'string' && delta.refusal !== '') this.text('refusal', delta.refusal);
    for (const call of delta.tool_calls ?? []) this.toolCall(call.index, call.id, call.function?.name, call.function?.arguments);
    if (choice.finish_reason) this.finish = choice.finish_reason;
  }

  sendAll(chunks: readonly ChatChunk[]): void {
    for (const chunk of chunks) this.send(chunk);
  }

  /** The stream is complete: every open item is closed, then, once the Response is stored, response.completed (or incomplete). */
  async done(trailers?: Record<string, string>): Promise<void> {
    for (const open of this.items) if (!open.closed) this.closeItem(open);
    const response = finished(this.frame(), this.items.map((open) => open.item), this.finish, this.usage());
    await this.settle(response);
    this.emit({ type: response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', response });
    this.writer.close(trailers);
  }

  /**
   * A failure after the stream began: OpenAI's `error` event, then response.failed holding what the
   * client already received (items as they stood). response.failed's code is one of OpenAI's own
   * (rate_limit_exceeded or server_error); the error event carries the gateway's.
   */
  error(body: ErrorBody): void {
    const { message, type, code, param } = body.error;
    this.emit({ type: 'error', code: code ?? type, message, param, error: { type, code: code ?? type, message, param } });
    const failed = /rate_limit/.test(`${type} ${code ?? ''}`) ? 'rate_limit_exceeded' : 'server_error';
    const response: ResponseObject = {
      ...responseShell(this.frame()),
      status: 'failed',
      error: { code: failed, message },
      output: this.items.map((open) => snapshot(open)),
      usage: null,
    };
    this.emit({ type: 'response.failed', response });
  }

  close(trailers?: Record<string, string>): void {
    this.writer.close(trailers);
  }

  private emit(event: { type: string; [key: string]: unknown }): void {
    const payload = { ...event, sequence_number: this.sequence++ };
    this.writer.sendEvent(event.type, payload);
  }

  private text(kind: 'text' | 'refusal', value: string): void {
    let open = this.message;
    if (!open || open.closed) {
      const item: OutputMessage = { id: newId('msg'), type: 'message', status: 'in_progress', role: 'assistant', content: [] };
      open = this.message = this.add(item);
    }
    const item = open.item as OutputMessage;
    let part = open.parts.find((p) => p.kind === kind);
    if (!part) {
      part = { kind, index: open.parts.length, value: '' };
      open.parts.push(part);
      const empty = kind === 'text' ? { type: 'output_text', text: '', annotations: [], logprobs: [] } : { type: 'refusal', refusal: '' };
      this.emit({ type: 'response.content_part.added', item_id: item.id, output_index: open.outputIndex, content_index: part.index, part: empty });
    }
    part.value += value;
    const where = { item_id: item.id, output_index: open.outputIndex, content_index: part.index };
    if (kind === 'text') this.emit({ type: 'response.output_text.delta', ...where, delta: value, logprobs: [] });
    else this.emit({ type: 'response.refusal.delta', ...where, delta: value });
  }

  private toolCall(index: number, callId: string | undefined, name: string | undefined, args: string | undefined): void {
    let open = this.calls.get(index);
    if (!open) {
      open = this.add({ id: newId('fc'), type: 'function_call', status: 'in_progress', call_id: callId ?? '', name: name ?? '', arguments: '' });
      this.calls.set(index, open);
    }
    const item = open.item as Extract<OutputItem, { type: 'function_call' }>;
    if (callId && !item.call_id) item.call_id = callId;
    if (name && !item.name) item.name = name;
    if (args) {
      item.arguments += args;
      // Arguments of a call already closed (a provider interleaving calls) still reach the final Response.
      if (!open.closed) this.emit({ type: 'response.function_call_arguments.delta', item_id: item.id, output_index: open.outputIndex, delta: args });
    }
  }

  private add(item: OutputItem): OpenItem {
    const previous = this.items.at(-1);
    if (previous && !previous.closed) this.closeItem(previous);
    const open: OpenItem = { outputIndex: this.items.length, item, parts: [], closed: false };
    this.items.push(open);
    // An item is announced as it will look with no content yet (output_item.added carries a copy).
    this.emit({ type: 'response.output_item.added', output_index: open.outputIndex, item: structuredClone(item) });
    return open;
  }

  private closeItem(open: OpenItem): void {
    open.closed = true;
    const status = this.finish === 'length' || this.finish === 'content_filter' ? 'incomplete' : 'completed';
    const item = open.item;
    if (item.type === 'message') {
      for (const part of open.parts) {
        const where = { item_id: item.id, output_index: open.outputIndex, content_index: part.index };
        const done = part.kind === 'text' ? { type: 'output_text' as const, text: part.value, annotations: [], logprobs: [] } : { type: 'refusal' as const, refusal: part.value };
        if (part.kind === 'text') this.emit({ type: 'response.output_text.done', ...where, text: part.value, logprobs: [] });
        else this.emit({ type: 'response.refusal.done', ...where, refusal: part.value });
        this.emit({ type: 'response.content_part.done', ...where, part: done });
        item.content.push(done);
      }
    } else {
      this.emit({ type: 'response.function_call_arguments.done', item_id: item.id, output_index: open.outputIndex, name: item.name, arguments: item.arguments });
    }
    item.status = status;
    this.emit({ type: 'response.output_item.done', output_index: open.outputIndex, item });
  }
}
