// OpenAI chat request → Mistral chat-completions body. Mistral rejects fields it does not know (422
// extra_forbidden), so the body is built from an allow-list, never passed through: seed →
// random_seed, tool_choice "required" → "any", developer → system, tool results get the function
// name; stream_options is never sent. Rules and sources: docs/providers/mistral.md.
import type { ChatMessage, ChatRequest, FunctionTool, ResponseFormat, ToolChoice } from '../../core/chat-types.js';
import type { TranslateContext } from '../../core/provider.js';
import { isObject } from '../shared/json-object.js';
import { outputLimit, plainText, refuse, refuseOpenAIOnly, textContent, userContent } from '../shared/openai-request.js';

/** Sampling fields Mistral takes under OpenAI's own names and ranges. */
const SAME_NAME = ['temperature', 'top_p', 'presence_penalty', 'frequency_penalty'] as const;

export function mistralBody(request: ChatRequest, context: TranslateContext): Record<string, unknown> {
  refuseOpenAIOnly(request, 'mistral');
  const body: Record<string, unknown> = { model: context.model.native_id, messages: messages(request.messages, context) };
  for (const field of SAME_NAME) if (request[field] != null) body[field] = request[field];
  const maxTokens = outputLimit(request);
  if (maxTokens !== undefined) body.max_tokens = maxTokens;
  // Mistral takes a string or a list, as OpenAI does.
  if (request.stop != null && request.stop.length > 0) body.stop = request.stop;
  if (request.seed != null) body.random_seed = request.seed;
  if (request.response_format) body.response_format = responseFormat(request.response_format);
  if (request.tools?.length) {
    body.tools = request.tools.map(tool);
    if (request.tool_choice !== undefined) body.tool_choice = toolChoice(request.tool_choice);
    if (typeof request.parallel_tool_calls === 'boolean') body.parallel_tool_calls = request.parallel_tool_calls;
  }
  // Predicted outputs share OpenAI's shape ({type: "content", content}).
  if (isObject(request.prediction)) body.prediction = request.prediction;
  body.stream = context.stream;
  return body;
}

function messages(list: ChatMessage[], context: TranslateContext): Record<string, unknown>[] {
  // OpenAI tool results carry only the call id; Mistral's also name the function, found on the call.
  const functionOf = new Map<string, string>();
  for (const m of list) for (const call of m.tool_calls ?? []) functionOf.set(call.id, call.function.name);
  return list.map((m, i) => {
    const at = `messages[${i}]`;
    switch (m.role) {
      case 'system':
      case 'developer':
        return { role: 'system', content: textContent(m.content) };
      case 'user':
        return { role: 'user', content: userContent(m, at, context.model, 'mistral') };
      case 'assistant':
        return assistant(m);
      case 'tool': {
        const name = functionOf.get(m.tool_call_id ?? '');
        return { role: 'tool', tool_call_id: m.tool_call_id, ...(name ? { name } : {}), content: textContent(m.content) };
      }
      default:
        throw refuse(`${at}.role`, `The mistral provider has no '${m.role}' messages; send tool results as 'tool' messages.`);
    }
  });
}

/** Mistral's own tool-calling turns carry `content: ""` (never null); replayed turns do the same. */
function assistant(m: ChatMessage): Record<string, unknown> {
  const out: Record<string, unknown> = { role: 'assistant', content: plainText(m.content) };
  if (m.tool_calls?.length) {
    out.tool_calls = m.tool_calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments } }));
  }
  return out;
}

function tool({ function: f }: FunctionTool): Record<string, unknown> {
  return {
    type: 'function',
    function: {
      name: f.name,
      ...(f.description !== undefined ? { description: f.description } : {}),
      // Mistral requires parameters; OpenAI's default for a function without them is "no arguments".
      parameters: f.parameters ?? { type: 'object', properties: {} },
      ...(typeof f.strict === 'boolean' ? { strict: f.strict } : {}),
    },
  };
}

/** Mistral spells "must call a tool" `any`; none, auto and the named form are OpenAI's. */
function toolChoice(choice: ToolChoice): unknown {
  if (choice === 'required') return 'any';
  if (typeof choice === 'object') return { type: 'function', function: { name: choice.function.name } };
  return choice;
}

/** Same three types as OpenAI; rebuilt so only the fields Mistral declares are sent. */
function responseFormat(format: ResponseFormat): Record<string, unknown> {
  if (format.type !== 'json_schema') return { type: format.type };
  const { name, description, schema, strict } = format.json_schema;
  return {
    type: 'json_schema',
    json_schema: { name, ...(description !== undefined ? { description } : {}), schema: schema ?? {}, ...(typeof strict === 'boolean' ? { strict } : {}) },
  };
}
