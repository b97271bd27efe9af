// The Response object the gateway answers with, built from the chat completion the pipeline
// produced (whichever provider made it): text → a message item with an output_text part, a refusal
// → a refusal part, tool calls → function_call items; finish reason `length` → status incomplete
// (max_output_tokens), `content_filter` → incomplete (content_filter). Request fields are echoed as
// OpenAI echoes them. Ids are the gateway's own (`resp_`, `msg_`, `fc_` and random hex).
import { randomBytes } from 'node:crypto';
import type { ChatCompletion, Usage } from '../chat-types.js';
import type { OutputItem, ResponseObject, ResponsesRequest, ResponsesUsage } from './types.js';

export function newId(prefix: 'resp' | 'msg' | 'fc'): string {
  return `${prefix}_${randomBytes(16).toString('hex')}`;
}

/** The Response's usage; zeros when the provider reported none (clients require the object; the bill uses the gateway's estimate then). */
export function responsesUsage(usage: Usage | undefined): ResponsesUsage {
  if (!usage) return { input_tokens: 0, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: 0, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 0 };
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0, cache_write_tokens: usage.prompt_tokens_details?.cache_write_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage.total_tokens,
  };
}

/** What identifies one response while it is made: its id, when it started, the request it answers. */
export interface ResponseFrame {
  id: string;
  createdAt: number;
  request: ResponsesRequest;
  /** The model that answers (the routed catalog id), once known. */
  model: string;
}

/** The Response object with everything but the outcome: status in_progress, no output, no usage. */
export function responseShell(frame: ResponseFrame): ResponseObject {
  const r = frame.request;
  return {
    id: frame.id,
    object: 'response',
    created_at: frame.createdAt,
    status: 'in_progress',
    background: false,
    completed_at: null,
    error: null,
    incomplete_details: null,
    instructions: r.instructions ?? null,
    max_output_tokens: r.max_output_tokens ?? null,
    max_tool_calls: null,
    model: frame.model,
    output: [],
    parallel_tool_calls: r.parallel_tool_calls ?? true,
    previous_response_id: r.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    service_tier: 'default',
    store: r.store ?? true,
    temperature: r.temperature ?? 1,
    text: { format: r.text?.format ?? { type: 'text' } },
    tool_choice: r.tool_choice ?? 'auto',
    tools: (r.tools ?? []).map((tool) => ({ ...tool, strict: tool.strict ?? null, description: tool.description ?? null, parameters: tool.parameters ?? null })),
    top_p: r.top_p ?? 1,
    truncation: 'disabled',
    usage: null,
    user: r.user ?? null,
    metadata: r.metadata ?? {},
  };
}

/** The finished Response object for a whole chat completion. */
export function responseOf(frame: ResponseFrame, completion: ChatCompletion, usage: Usage | undefined): ResponseObject {
  const choice = completion.choices[0];
  const output: OutputItem[] = [];
  const message = choice?.message;
  if (message && (message.content || message.refusal)) {
    const content: Extract<OutputItem, { type: 'message' }>['content'] = [];
    if (message.content) content.push({ type: 'output_text', text: message.content, annotations: [], logprobs: [] });
    if (message.refusal) content.push({ type: 'refusal', refusal: message.refusal });
    output.push({ id: newId('msg'), type: 'message', status: 'completed', role: 'assistant', content });
  }
  for (const call of message?.tool_calls ?? []) {
    output.push({ id: newId('fc'), type: 'function_call', status: 'completed', call_id: call.id, name: call.function.name, arguments: call.function.arguments });
  }
  return finished(frame, output, choice?.finish_reason ?? 'stop', usage);
}

/** The Response object once its output is known; `finish` is the chat finish reason. */
export function finished(frame: ResponseFrame, output: OutputItem[], finish: string | null, usage: Usage | undefined): ResponseObject {
  const reason = finish === 'length' ? 'max_output_tokens' : finish === 'content_filter' ? 'content_filter' : undefined;
  if (reason) for (const item of output) item.status = 'incomplete';
  return {
    ...responseShell(frame),
    status: reason ? 'incomplete' : 'completed',
    completed_at: reason ? null : Math.floor(Date.now() / 1000),
    incomplete_details: reason ? { reason } : null,
    output,
    usage: responsesUsage(usage),
  };
}
