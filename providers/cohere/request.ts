// OpenAI chat request → Cohere v2 chat body, sending only fields V2ChatRequest declares (Cohere
// answers unknown fields with 400). Renames top_p → p, stop → stop_sequences, assistant text next to
// tool calls → tool_plan; refuses logprobs, logit_bias, audio, 'function' messages and images on a
// model without vision. The whole table, with sources, is docs/providers/cohere.md.
import type { ChatMessage, ChatRequest, FunctionTool, ResponseFormat } from '../../core/chat-types.js';
import type { TranslateContext } from '../../core/provider.js';
import { outputLimit, plainText, refuse, refuseOpenAIOnly, stopList, textContent, userContent } from '../shared/openai-request.js';

export function cohereBody(request: ChatRequest, context: TranslateContext): Record<string, unknown> {
  refuseOpenAIOnly(request, 'cohere');
  const body: Record<string, unknown> = { model: context.model.native_id, messages: request.messages.map((m, i) => message(m, `messages[${i}]`, context)) };
  Object.assign(body, tools(request));
  const format = request.response_format && responseFormat(request.response_format);
  if (format) body.response_format = format;
  if (request.temperature != null) body.temperature = request.temperature;
  // Cohere's p lives in [0.01, 0.99]; OpenAI's top_p in [0, 1]. The nearest allowed value keeps the intent.
  if (request.top_p != null) body.p = clamp(request.top_p, 0.01, 0.99);
  const maxTokens = outputLimit(request);
  if (maxTokens !== undefined) body.max_tokens = maxTokens;
  const stop = stopList(request);
  if (stop.length > 0) body.stop_sequences = stop;
  if (request.seed != null) body.seed = request.seed;
  // Cohere's penalties live in [0, 1] and cannot be negative (no "encourage repetition").
  if (request.frequency_penalty != null) body.frequency_penalty = clamp(request.frequency_penalty, 0, 1);
  if (request.presence_penalty != null) body.presence_penalty = clamp(request.presence_penalty, 0, 1);
  body.stream = context.stream;
  return body;
}

function message(m: ChatMessage, at: string, context: TranslateContext): Record<string, unknown> {
  switch (m.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: textContent(m.content) };
    case 'user':
      return { role: 'user', content: userContent(m, at, context.model, 'cohere') };
    case 'assistant':
      return assistant(m);
    case 'tool':
      return { role: 'tool', tool_call_id: m.tool_call_id, content: toolResult(m.content) };
    default:
      throw refuse(`${at}.role`, `The cohere provider has no '${m.role}' messages; send tool results as 'tool' messages.`);
  }
}

/**
 * Cohere refuses text content next to tool calls ("text content is not allowed when tool_calls are
 * provided … use 'tool_plan'", vercel/ai#5794): that text is the plan that led to the calls.
 */
function assistant(m: ChatMessage): Record<string, unknown> {
  const text = plainText(m.content);
  if (!m.tool_calls?.length) return { role: 'assistant', content: text };
  const out: Record<string, unknown> = {
    role: 'assistant',
    tool_calls: m.tool_calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments } })),
  };
  if (text) out.tool_plan = text;
  return out;
}

/** Tool results go as documents, Cohere's documented form for results the model can cite. */
function toolResult(content: ChatMessage['content']): Array<{ type: 'document'; document: { data: string } }> {
  const text = textContent(content);
  const pieces = typeof text === 'string' ? [text] : text.map((part) => part.text);
  return pieces.map((data) => ({ type: 'document', document: { data } }));
}

/**
 * Cohere's tool_choice knows only REQUIRED and NONE ("auto" is its default). A named function is
 * honoured by offering only that tool and requiring a call, which is what OpenAI's named choice means.
 */
function tools(request: ChatRequest): Record<string, unknown> {
  if (!request.tools?.length) return {};
  let offered: FunctionTool[] = request.tools;
  let choice: 'REQUIRED' | 'NONE' | undefined;
  const requested = request.tool_choice;
  if (requested === 'none') choice = 'NONE';
  else if (requested === 'required') choice = 'REQUIRED';
  else if (typeof requested === 'object') {
    offered = offered.filter((tool) => tool.function.name === requested.function.name);
    if (offered.length === 0) throw refuse('tool_choice', `tool_choice names '${requested.function.name}', which is not one of the tools.`);
    choice = 'REQUIRED';
  }
  const out: Record<string, unknown> = {
    tools: offered.map(({ function: f }) => ({
      type: 'function',
      function: { name: f.name, ...(f.description !== undefined ? { description: f.description } : {}), ...(f.parameters ? { parameters: f.parameters } : {}) },
    })),
  };
  // strict is per tool in OpenAI, per request in Cohere: one strict tool makes them all strict,
  // which only ever tightens what the arguments may be.
  if (offered.some((tool) => tool.function.strict === true)) out.strict_tools = true;
  if (choice) out.tool_choice = choice;
  return out;
}

/** Cohere has one JSON mode; a schema rides inside it and is always enforced. */
function responseFormat(format: ResponseFormat): Record<string, unknown> | undefined {
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'json_schema') return format.json_schema.schema ? { type: 'json_object', json_schema: format.json_schema.schema } : { type: 'json_object' };
  return undefined; // text is Cohere's default
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
