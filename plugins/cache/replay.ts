// Turns a cached answer into what this client asked for: a completion for a non-stream request,
// chunks for a stream — the original chunks when the answer was streamed, else chunks built from
// the completion the way OpenAI streams one (role and content, tool calls, then the finish reason),
// followed by the usage chunk only when the client asked for it (stream_options.include_usage).
import type { ChatChunk, ChatCompletion, FinishReason, ToolCall, Usage } from '../../core/chat-types.js';
import { storedCompletion, type StoredAnswer } from './entry.js';

export function asCompletion(answer: StoredAnswer): ChatCompletion {
  return storedCompletion(answer) ?? completionFromChunks(answer.chunks!, answer.usage);
}

export function asChunks(answer: StoredAnswer, includeUsage: boolean): ChatChunk[] {
  const chunks = answer.chunks ?? chunksFromCompletion(storedCompletion(answer)!);
  if (!includeUsage) return chunks.map(withoutUsage);
  return answer.usage ? [...chunks, { ...header(chunks[0]!), choices: [], usage: answer.usage }] : chunks;
}

/** Whether a streamed answer is whole: every choice it started has a finish reason. */
export function streamFinished(chunks: readonly ChatChunk[]): boolean {
  const open = new Set<number>();
  const finished = new Set<number>();
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      open.add(choice.index);
      if (choice.finish_reason) finished.add(choice.index);
    }
  }
  return open.size > 0 && open.size === finished.size;
}

type Header = Pick<ChatChunk, 'id' | 'object' | 'created' | 'model'> & { system_fingerprint?: string | null; service_tier?: unknown };

function header(source: { id: string; created: number; model: string; system_fingerprint?: unknown; service_tier?: unknown }): Header {
  const out: Header = { id: source.id, object: 'chat.completion.chunk', created: source.created, model: source.model };
  if (typeof source.system_fingerprint === 'string') out.system_fingerprint = source.system_fingerprint;
  if (source.service_tier != null) out.service_tier = source.service_tier;
  return out;
}

function withoutUsage(chunk: ChatChunk): ChatChunk {
  if (!('usage' in chunk)) return chunk;
  const copy = { ...chunk };
  delete copy.usage;
  return copy;
}

function chunksFromCompletion(completion: ChatCompletion): ChatChunk[] {
  const base = header(completion);
  const chunks: ChatChunk[] = [];
  for (const choice of completion.choices) {
    const message = choice.message;
    const delta: ChatChunk['choices'][number]['delta'] = { role: 'assistant', content: message.content };
    if (message.refusal != null) delta.refusal = message.refusal;
    if (message.tool_calls?.length) delta.tool_calls = message.tool_calls.map((call, index) => ({ index, ...call }));
    chunks.push({ ...base, choices: [{ index: choice.index, delta, logprobs: null, finish_reason: null }] });
    chunks.push({ ...base, choices: [{ index: choice.index, delta: {}, logprobs: null, finish_reason: choice.finish_reason }] });
  }
  return chunks;
}

interface Assembled {
  content: string[] | null;
  refusal: string[] | null;
  tools: Map<number, ToolCall>;
  finish: FinishReason | null;
}

function completionFromChunks(chunks: readonly ChatChunk[], usage: Usage | undefined): ChatCompletion {
  const choices = new Map<number, Assembled>();
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      let into = choices.get(choice.index);
      if (!into) choices.set(choice.index, (into = { content: null, refusal: null, tools: new Map(), finish: null }));
      const delta = choice.delta;
      if (typeof delta.content === 'string') (into.content ??= []).push(delta.content);
      if (typeof delta.refusal === 'string') (into.refusal ??= []).push(delta.refusal);
      for (const part of delta.tool_calls ?? []) {
        let call = into.tools.get(part.index);
        if (!call) into.tools.set(part.index, (call = { id: '', type: 'function', function: { name: '', arguments: '' } }));
        if (part.id) call.id = part.id;
        if (part.function?.name) call.function.name = part.function.name;
        if (part.function?.arguments) call.function.arguments += part.function.arguments;
      }
      if (choice.finish_reason) into.finish = choice.finish_reason;
    }
  }
  const { object: _chunkObject, ...rest } = header(chunks[0]!);
  return {
    ...rest,
    object: 'chat.completion',
    choices: [...choices.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, into]) => ({
        index,
        message: {
          role: 'assistant' as const,
          content: into.content ? into.content.join('') : null,
          refusal: into.refusal ? into.refusal.join('') : null,
          ...(into.tools.size > 0 ? { tool_calls: [...into.tools.entries()].sort(([a], [b]) => a - b).map(([, call]) => call) } : {}),
        },
        logprobs: null,
        finish_reason: into.finish!,
      })),
    ...(usage ? { usage } : {}),
  };
}
