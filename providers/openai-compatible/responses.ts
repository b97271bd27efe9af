// OpenAI's own Responses endpoint (POST {base}/responses), used for Responses requests routed to
// the `openai` provider. The request goes as the client wrote it, with the routed model, the stored
// turns of previous_response_id written out before the input (the gateway keeps the state, so
// OpenAI is asked with `store: false` and never sees the gateway's ids), and the reasoning-model
// rule of the chat adapter (no temperature/top_p). The answer and the stream are read back into
// chat shapes — text, refusals, function calls, usage, finish reason — so limits, cost, cache and
// failover work as for any provider; reasoning items have no chat equivalent and are not kept.
import type { ChatChunk, ChatCompletion, FinishReason, ToolCall, Usage } from '../../core/chat-types.js';
import type { StreamTranslator, TranslateContext, UpstreamRequest } from '../../core/provider.js';
import type { SseEvent } from '../../core/sse.js';
import type { InputItem, ResponsesRequest } from '../../core/responses/types.js';
import { inputItems } from '../../core/responses/request.js';
import { badResponse, reportedFailure, type UpstreamError } from '../../core/upstream-error.js';
import { isObject } from '../shared/json-object.js';
import { eventPayload } from '../shared/native-response.js';
import { openAIStreamError } from './errors.js';

/** Fields of the gateway's or of stored state that OpenAI is not sent. */
const NOT_SENT = ['modelgate', 'previous_response_id', 'stream_options'];

export function responsesBody(request: ResponsesRequest, history: readonly InputItem[], context: TranslateContext, reasoningRules: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { ...request, model: context.model.native_id, input: [...history, ...inputItems(request)].map(portable), store: false };
  for (const field of NOT_SENT) delete body[field];
  if (context.stream) body.stream = true;
  else delete body.stream;
  if (reasoningRules && context.model.capabilities.reasoning) {
    delete body.temperature;
    delete body.top_p;
  }
  return body;
}

/**
 * An item as OpenAI accepts it from a client without stored state, and only what the gateway
 * checked: no item ids or status, content parts with their checked fields (no file_id riding along
 * beside a data URL, image detail only low, high or auto).
 */
function portable(item: InputItem): Record<string, unknown> {
  if (item.type === 'function_call') return { type: 'function_call', call_id: item.call_id, name: item.name, arguments: item.arguments };
  if (item.type === 'function_call_output') {
    return { type: 'function_call_output', call_id: item.call_id, output: typeof item.output === 'string' ? item.output : item.output.map(part) };
  }
  // An assistant's text is output_text to OpenAI, however the client labelled it.
  const parts = typeof item.content === 'string' ? item.content : item.content.map((p) => part(item.role === 'assistant' && p.type === 'input_text' ? { ...p, type: 'output_text' } : p));
  const message: Record<string, unknown> = { role: item.role, content: parts };
  if (item.type === 'message') message.type = 'message';
  return message;
}

function part(value: { type: string; [key: string]: unknown }): Record<string, unknown> {
  switch (value.type) {
    case 'input_image':
      return { type: 'input_image', image_url: value.image_url, detail: value.detail === 'low' || value.detail === 'high' ? value.detail : 'auto' };
    case 'input_file':
      return { type: 'input_file', file_data: value.file_data, ...(typeof value.filename === 'string' ? { filename: value.filename } : {}) };
    case 'refusal':
      return { type: 'refusal', refusal: value.refusal };
    case 'output_text':
      return { type: 'output_text', text: value.text, annotations: [] };
    default:
      return { type: 'input_text', text: value.text };
  }
}

export function responsesRequest(base: string, headers: (accept: string) => Record<string, string>, body: Record<string, unknown>, stream: boolean): UpstreamRequest {
  return { url: `${base}/responses`, method: 'POST', headers: headers(stream ? 'text/event-stream' : 'application/json'), body: JSON.stringify(body) };
}

function usageOf(usage: unknown): Usage | undefined {
  if (!isObject(usage) || typeof usage.input_tokens !== 'number' || typeof usage.output_tokens !== 'number') return undefined;
  const cached = isObject(usage.input_tokens_details) && typeof usage.input_tokens_details.cached_tokens === 'number' ? usage.input_tokens_details.cached_tokens : 0;
  const reasoning = isObject(usage.output_tokens_details) && typeof usage.output_tokens_details.reasoning_tokens === 'number' ? usage.output_tokens_details.reasoning_tokens : 0;
  return {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: typeof usage.total_tokens === 'number' ? usage.total_tokens : usage.input_tokens + usage.output_tokens,
    prompt_tokens_details: { cached_tokens: cached },
    completion_tokens_details: { reasoning_tokens: reasoning },
  };
}

/** The chat finish reason a Response's status means. */
function finishOf(response: Record<string, unknown>, calls: number): FinishReason {
  if (response.status === 'incomplete') {
    const reason = isObject(response.incomplete_details) ? response.incomplete_details.reason : undefined;
    return reason === 'content_filter' ? 'content_filter' : 'length';
  }
  return calls > 0 ? 'tool_calls' : 'stop';
}

/** A failed Response, or an error event: not an answer (retryable unless OpenAI says otherwise). */
function failure(provider: string, error: unknown): UpstreamError {
  return openAIStreamError(provider, error);
}

export function responsesCompletion(provider: string, body: unknown): ChatCompletion {
  if (!isObject(body) || body.object !== 'response' || !Array.isArray(body.output)) throw badResponse(provider, 'the body is not a Response');
  if (body.status === 'failed') throw reportedFailure(provider, { detail: isObject(body.error) && typeof body.error.message === 'string' ? body.error.message : undefined, inStream: false });
  let text: string | null = null;
  let refusal: string | null = null;
  const calls: ToolCall[] = [];
  for (const item of body.output) {
    if (!isObject(item)) throw badResponse(provider, 'an output item is not an object');
    if (item.type === 'message' && Array.isArray(item.content)) {
      for (const part of item.content) {
        if (isObject(part) && part.type === 'output_text' && typeof part.text === 'string') text = (text ?? '') + part.text;
        if (isObject(part) && part.type === 'refusal' && typeof part.refusal === 'string') refusal = (refusal ?? '') + part.refusal;
      }
    } else if (item.type === 'function_call') {
      if (typeof item.call_id !== 'string' || typeof item.name !== 'string') throw badResponse(provider, 'a function call has no call_id or name');
      calls.push({ id: item.call_id, type: 'function', function: { name: item.name, arguments: typeof item.arguments === 'string' ? item.arguments : '' } });
    }
  }
  const usage = usageOf(body.usage);
  return {
    id: typeof body.id === 'string' ? body.id : 'resp',
    object: 'chat.completion',
    created: typeof body.created_at === 'number' ? body.created_at : Math.floor(Date.now() / 1000),
    model: typeof body.model === 'string' ? body.model : '',
    choices: [{ index: 0, message: { role: 'assistant', content: text, refusal, ...(calls.length ? { tool_calls: calls } : {}) }, logprobs: null, finish_reason: finishOf(body, calls.length) }],
    ...(usage ? { usage } : {}),
  };
}

/** OpenAI's Responses events → chat chunks: text and refusal deltas, function calls by output index, the finish with usage. */
export class ResponsesStreamTranslator implements StreamTranslator {
  usage: Usage | undefined;
  finished = false;
  private id = 'resp';
  private model = '';
  private readonly created = Math.floor(Date.now() / 1000);
  /** Function-call items by output_index → their chat tool-call index. */
  private readonly calls = new Map<number, number>();

  constructor(private readonly provider: string) {}

  event(event: SseEvent): ChatChunk[] {
    const payload = eventPayload(this.provider, event);
    const type = payload.type ?? event.event;
    switch (type) {
      case 'response.created':
      case 'response.in_progress':
        if (isObject(payload.response)) {
          if (typeof payload.response.id === 'string') this.id = payload.response.id;
          if (typeof payload.response.model === 'string') this.model = payload.response.model;
        }
        return [];
      case 'response.output_text.delta':
        return typeof payload.delta === 'string' && payload.delta !== '' ? [this.chunk({ content: payload.delta })] : [];
      case 'response.refusal.delta':
        return typeof payload.delta === 'string' && payload.delta !== '' ? [this.chunk({ refusal: payload.delta })] : [];
      case 'response.output_item.added': {
        const item = payload.item;
        if (!isObject(item) || item.type !== 'function_call') return [];
        if (typeof item.call_id !== 'string' || typeof item.name !== 'string') throw badResponse(this.provider, 'a function call has no call_id or name');
        const index = this.calls.size;
        this.calls.set(Number(payload.output_index), index);
        const args = typeof item.arguments === 'string' ? item.arguments : '';
        return [this.chunk({ tool_calls: [{ index, id: item.call_id, type: 'function', function: { name: item.name, arguments: args } }] })];
      }
      case 'response.function_call_arguments.delta': {
        const index = this.calls.get(Number(payload.output_index));
        if (index === undefined) throw badResponse(this.provider, 'function call arguments for an item that was not announced');
        return typeof payload.delta === 'string' && payload.delta !== '' ? [this.chunk({ tool_calls: [{ index, function: { arguments: payload.delta } }] })] : [];
      }
      case 'response.completed':
      case 'response.incomplete': {
        const response = isObject(payload.response) ? payload.response : {};
        this.usage = usageOf(response.usage);
        this.finished = true;
        const last = this.chunk({}, finishOf(response, this.calls.size));
        return this.usage ? [last, { ...this.header(), choices: [], usage: this.usage }] : [last];
      }
      case 'response.failed': {
        const response = isObject(payload.response) ? payload.response : {};
        throw failure(this.provider, response.error);
      }
      case 'error':
        throw failure(this.provider, isObject(payload.error) ? payload.error : payload);
      default:
        return [];
    }
  }

  end(): ChatChunk[] {
    return [];
  }

  private header(): Pick<ChatChunk, 'id' | 'object' | 'created' | 'model'> {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model };
  }

  private chunk(delta: ChatChunk['choices'][number]['delta'], finish: FinishReason | null = null): ChatChunk {
    return { ...this.header(), choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] };
  }
}
