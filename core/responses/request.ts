// POST /v1/responses, read: the body is checked field by field (a bad one is a 400 naming it, in
// the Responses API's own terms: `input[2].content[0].type`) and turned into the chat request the
// rest of the gateway runs on — routing, limits, cost, cache and every adapter. The mapping:
//   instructions → a system message first; input text → a user message; message items keep their
//   role (input_text → text parts, input_image → image_url parts, input_file → file parts);
//   function_call items → the assistant's tool_calls; function_call_output → tool messages;
//   reasoning items are dropped (no chat equivalent); text.format → response_format;
//   max_output_tokens → max_completion_tokens; function tools → chat function tools.
// item_reference items name output items of this key's stored responses and are replaced by them
// (resolveReferences). What has no equivalent anywhere behind the gateway is refused with 400:
// built-in tools (web and file search, computer use, code interpreter, MCP, …), file ids,
// background mode, stored prompts and conversations.
import { GatewayError } from '../errors.js';
import { MAX_MODEL_NAME_LENGTH, validateChatRequest } from '../chat-request.js';
import type { ChatMessage, ChatRequest, ContentPart, FunctionTool, ResponseFormat, ToolCall, ToolChoice } from '../chat-types.js';
import type { InputItem, ResponsesFunctionTool, ResponsesRequest, ResponsesToolChoice, TextFormat } from './types.js';

/** OpenAI's bounds on `metadata`: 16 pairs, keys of 64 and values of 512 characters. */
export const METADATA_LIMITS = { pairs: 16, keyLength: 64, valueLength: 512 } as const;

const REFUSED_FIELDS: Record<string, string> = {
  background: 'background mode is not supported by the gateway: send the request without it',
  conversation: 'conversations are not supported by the gateway: use previous_response_id',
  prompt: 'stored prompt templates are not supported by the gateway: send the prompt as input',
};

/** Response ids the gateway issues: `resp_` and 32 hex digits (checked before any lookup). */
export const RESPONSE_ID = /^resp_[0-9a-f]{32}$/;

function bad(param: string, message: string, code: string | null = 'invalid_request'): GatewayError {
  return new GatewayError('bad_request', { param, message, code });
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Checks the body's own fields; throws a 400 naming the first bad one. Returns it typed. */
export function readResponsesRequest(body: unknown): ResponsesRequest {
  if (!isObject(body)) throw bad('', 'The request body must be a JSON object.');
  const { model } = body;
  if (typeof model !== 'string' || model.length === 0 || model.length > MAX_MODEL_NAME_LENGTH) {
    throw bad('model', `'model' must be a non-empty string of at most ${MAX_MODEL_NAME_LENGTH} characters.`);
  }
  for (const [field, why] of Object.entries(REFUSED_FIELDS)) {
    if (body[field] !== undefined && body[field] !== null && body[field] !== false) throw bad(field, `'${field}': ${why}.`, 'unsupported_parameter');
    delete body[field]; // an explicit null or false means "off": not passed on
  }
  optional(body, 'instructions', 'string');
  optional(body, 'stream', 'boolean');
  optional(body, 'store', 'boolean');
  optional(body, 'parallel_tool_calls', 'boolean');
  optional(body, 'user', 'string');
  optional(body, 'previous_response_id', 'string');
  number(body, 'temperature', 0, 2, false);
  number(body, 'top_p', 0, 1, false);
  number(body, 'max_output_tokens', 1, Number.MAX_SAFE_INTEGER, true);
  if (body.previous_response_id != null && !RESPONSE_ID.test(body.previous_response_id as string)) {
    throw new GatewayError('response_not_found', { param: 'previous_response_id', message: `Previous response with id '${String(body.previous_response_id).slice(0, 64)}' not found.` });
  }
  if (body.service_tier != null && body.service_tier !== 'auto' && body.service_tier !== 'default') {
    throw bad('service_tier', "'service_tier' must be auto or default: other tiers are billed at prices the gateway does not know.", 'unsupported_parameter');
  }
  checkMetadata(body.metadata);
  if (body.input === undefined || body.input === null) {
    if (body.previous_response_id == null) throw bad('input', "'input' is required: a string or a list of input items.");
  } else if (typeof body.input !== 'string') {
    if (!Array.isArray(body.input)) throw bad('input', "'input' must be a string or a list of input items.");
    body.input.forEach((item, i) => checkItem(item, `input[${i}]`));
  }
  if (body.tools != null) {
    if (!Array.isArray(body.tools)) throw bad('tools', "'tools' must be a list.");
    body.tools.forEach((tool, i) => checkTool(tool, `tools[${i}]`));
  }
  if (body.tool_choice != null) checkToolChoice(body.tool_choice);
  if (body.text != null) {
    if (!isObject(body.text)) throw bad('text', "'text' must be an object.");
    if (body.text.format != null) checkFormat(body.text.format);
  }
  return body as ResponsesRequest;
}

function optional(body: Record<string, unknown>, field: string, type: 'string' | 'boolean'): void {
  const value = body[field];
  if (value !== undefined && value !== null && typeof value !== type) throw bad(field, `'${field}' must be a ${type}.`);
}

function number(body: Record<string, unknown>, field: string, min: number, max: number, integer: boolean): void {
  const value = body[field];
  if (value === undefined || value === null) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || (integer && !Number.isInteger(value)) || value < min || value > max) {
    throw bad(field, `'${field}' must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max === Number.MAX_SAFE_INTEGER ? 'any size' : max}.`);
  }
}

function checkMetadata(metadata: unknown): void {
  if (metadata === undefined || metadata === null) return;
  if (!isObject(metadata)) throw bad('metadata', "'metadata' must be an object of strings.");
  const entries = Object.entries(metadata);
  if (entries.length > METADATA_LIMITS.pairs) throw bad('metadata', `'metadata' holds at most ${METADATA_LIMITS.pairs} pairs.`);
  for (const [key, value] of entries) {
    if (key.length > METADATA_LIMITS.keyLength) throw bad('metadata', `'metadata' keys are at most ${METADATA_LIMITS.keyLength} characters.`);
    if (typeof value !== 'string' || value.length > METADATA_LIMITS.valueLength) {
      throw bad(`metadata.${key}`, `'metadata' values are strings of at most ${METADATA_LIMITS.valueLength} characters.`);
    }
  }
}

const ROLES = new Set(['user', 'assistant', 'system', 'developer']);
const PART_TYPES: Record<string, ReadonlySet<string>> = {
  user: new Set(['input_text', 'input_image', 'input_file']),
  system: new Set(['input_text']),
  developer: new Set(['input_text']),
  assistant: new Set(['output_text', 'refusal', 'input_text']),
  tool: new Set(['input_text']),
};

function checkItem(item: unknown, at: string): void {
  if (!isObject(item)) throw bad(at, `'${at}' must be an input item object.`);
  const type = item.type ?? 'message';
  switch (type) {
    case 'message': {
      if (typeof item.role !== 'string' || !ROLES.has(item.role)) throw bad(`${at}.role`, `'${at}.role' must be one of user, assistant, system, developer.`);
      if (typeof item.content === 'string') return;
      if (!Array.isArray(item.content)) throw bad(`${at}.content`, `'${at}.content' must be a string or a list of content parts.`);
      item.content.forEach((part, j) => checkPart(part, item.role as string, `${at}.content[${j}]`));
      return;
    }
    case 'function_call':
      for (const field of ['call_id', 'name', 'arguments']) {
        if (typeof item[field] !== 'string' || (field !== 'arguments' && item[field] === '')) throw bad(`${at}.${field}`, `'${at}.${field}' must be a string.`);
      }
      return;
    case 'function_call_output':
      if (typeof item.call_id !== 'string' || item.call_id === '') throw bad(`${at}.call_id`, `'${at}.call_id' must be a string.`);
      if (typeof item.output === 'string') return;
      if (!Array.isArray(item.output)) throw bad(`${at}.output`, `'${at}.output' must be a string or a list of content parts.`);
      // Chat tool results are text: an image or file in a tool's output would be dropped unseen.
      item.output.forEach((part, j) => checkPart(part, 'tool', `${at}.output[${j}]`));
      return;
    case 'reasoning':
      return; // dropped: reasoning is the provider's own and has no chat equivalent
    case 'item_reference':
      // Resolved from the stored output items of this key before the request is translated (chat-body).
      if (typeof item.id !== 'string' || item.id === '') throw bad(`${at}.id`, `'${at}.id' must be a string.`);
      return;
    default:
      throw bad(`${at}.type`, `Input items of type '${String(type).slice(0, 64)}' are not supported by the gateway: send messages, function_call and function_call_output items.`, 'unsupported_parameter');
  }
}

function checkPart(part: unknown, role: string, at: string): void {
  if (!isObject(part) || typeof part.type !== 'string') throw bad(at, `'${at}' must be a content part with a type.`);
  if (!PART_TYPES[role]!.has(part.type)) {
    throw bad(`${at}.type`, `'${at}.type': '${part.type.slice(0, 64)}' is not a content part ${role === 'tool' ? "a function call's output" : `a ${role} message`} can hold here.`);
  }
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      if (typeof part.text !== 'string') throw bad(`${at}.text`, `'${at}.text' must be a string.`);
      return;
    case 'refusal':
      if (typeof part.refusal !== 'string') throw bad(`${at}.refusal`, `'${at}.refusal' must be a string.`);
      return;
    case 'input_image':
      if (typeof part.image_url !== 'string' || part.image_url === '') {
        throw bad(`${at}.image_url`, `'${at}.image_url' must be an image URL or data URL: the gateway keeps no files, so file_id is not supported.`);
      }
      return;
    case 'input_file':
      // A file_url is fetched and billed by the provider at a size the gateway cannot know: its
      // reservation would undercount the bill. file_data is counted.
      if (typeof part.file_data !== 'string' || part.file_data === '') {
        throw bad(`${at}.file_data`, `'${at}' must carry the file as file_data: the gateway keeps no files (file_id) and cannot price a file it does not see (file_url).`);
      }
      return;
  }
}

function checkTool(tool: unknown, at: string): void {
  if (!isObject(tool) || typeof tool.type !== 'string') throw bad(at, `'${at}' must be a tool object with a type.`);
  if (tool.type !== 'function') {
    throw bad(
      `${at}.type`,
      `The built-in tool '${tool.type.slice(0, 64)}' is not supported by the gateway: only function tools are passed to providers.`,
      'unsupported_tool',
    );
  }
  if (typeof tool.name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(tool.name)) throw bad(`${at}.name`, `'${at}.name' must be 1-64 letters, digits, _ or -.`);
  if (tool.parameters != null && !isObject(tool.parameters)) throw bad(`${at}.parameters`, `'${at}.parameters' must be a JSON Schema object.`);
  if (tool.description != null && typeof tool.description !== 'string') throw bad(`${at}.description`, `'${at}.description' must be a string.`);
}

function checkToolChoice(choice: unknown): void {
  if (choice === 'none' || choice === 'auto' || choice === 'required') return;
  if (isObject(choice) && choice.type === 'function' && typeof choice.name === 'string') return;
  throw bad('tool_choice', "'tool_choice' must be none, auto, required or {type: 'function', name}.");
}

function checkFormat(format: unknown): void {
  if (!isObject(format)) throw bad('text.format', "'text.format' must be an object.");
  if (format.type === 'text' || format.type === 'json_object') return;
  if (format.type === 'json_schema') {
    if (typeof format.name !== 'string' || format.name === '') throw bad('text.format.name', "'text.format.name' must be a string.");
    if (!isObject(format.schema)) throw bad('text.format.schema', "'text.format.schema' must be a JSON Schema object.");
    return;
  }
  throw bad('text.format.type', "'text.format.type' must be text, json_object or json_schema.");
}

/** Output item ids the gateway issues (`msg_`, `fc_` and 32 hex digits). */
const ITEM_ID = /^(msg|fc)_[0-9a-f]{32}$/;

/** item_reference items one request may hold: each stands for a stored item, of any size. */
export const MAX_ITEM_REFERENCES = 1000;

/**
 * Replaces each item_reference of the input by the output item it names, looked up with `find`
 * (this key's stored items); a reference to no such item is a 404 naming it. Returns the bytes the
 * references stood for, which count against the body size limit.
 */
export async function resolveReferences(request: ResponsesRequest, find: (ids: string[]) => Promise<Map<string, InputItem>>): Promise<number> {
  if (!Array.isArray(request.input)) return 0;
  const input = request.input as Array<InputItem | { type: 'item_reference'; id: string }>;
  const ids = input.flatMap((item) => (item.type === 'item_reference' ? [item.id] : []));
  if (ids.length === 0) return 0;
  if (ids.length > MAX_ITEM_REFERENCES) throw bad('input', `'input' holds more than ${MAX_ITEM_REFERENCES} item_reference items.`);
  const known = ids.filter((id) => ITEM_ID.test(id));
  const found = known.length > 0 ? await find([...new Set(known)]) : new Map<string, InputItem>();
  let bytes = 0;
  request.input = input.map((item, i) => {
    if (item.type !== 'item_reference') return item;
    const resolved = found.get(item.id);
    if (!resolved) throw new GatewayError('response_not_found', { param: `input[${i}].id`, message: `Item with id '${item.id.slice(0, 64)}' not found.` });
    bytes += Buffer.byteLength(JSON.stringify(resolved));
    return resolved;
  });
  return bytes;
}

/**
 * The chat request a checked Responses request means, `history` (the stored turns of
 * previous_response_id) before its own input.
 */
export function toChatRequest(request: ResponsesRequest, history: readonly InputItem[]): ChatRequest {
  const messages: ChatMessage[] = [];
  if (request.instructions) messages.push({ role: 'system', content: request.instructions });
  const items: InputItem[] = [...history, ...inputItems(request)];
  for (const item of items) addItem(messages, item);
  if (messages.length === 0) throw bad('input', "'input' holds nothing to answer.");
  const chat: ChatRequest = { model: request.model, messages };
  if (request.stream) chat.stream = true;
  if (request.temperature != null) chat.temperature = request.temperature;
  if (request.top_p != null) chat.top_p = request.top_p;
  if (request.max_output_tokens != null) chat.max_completion_tokens = request.max_output_tokens;
  if (request.parallel_tool_calls != null) chat.parallel_tool_calls = request.parallel_tool_calls;
  const user = request.user ?? (typeof request.safety_identifier === 'string' ? request.safety_identifier : undefined);
  if (user) chat.user = user;
  if (request.tools?.length) chat.tools = request.tools.map(toChatTool);
  if (request.tool_choice != null) chat.tool_choice = toChatToolChoice(request.tool_choice);
  const format = request.text?.format;
  if (format) chat.response_format = toResponseFormat(format);
  // The same checks the chat endpoint runs: what passed here is a valid chat request.
  return validateChatRequest(chat);
}

/** The request's own input as items (a string is one user message). */
export function inputItems(request: ResponsesRequest): InputItem[] {
  if (request.input === undefined || request.input === null) return [];
  if (typeof request.input === 'string') return [{ role: 'user', content: request.input }];
  return request.input.filter((item) => (item as { type?: string }).type !== 'reasoning');
}

function addItem(messages: ChatMessage[], item: InputItem): void {
  if (item.type === 'function_call') {
    const call: ToolCall = { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
    const last = messages.at(-1);
    if (last?.role === 'assistant') (last.tool_calls ??= []).push(call);
    else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
    return;
  }
  if (item.type === 'function_call_output') {
    messages.push({ role: 'tool', tool_call_id: item.call_id, content: typeof item.output === 'string' ? item.output : textOf(item.output) });
    return;
  }
  const content = item.content;
  if (item.role === 'assistant') {
    const text = typeof content === 'string' ? content : textOf(content);
    const refusal = typeof content === 'string' ? '' : content.flatMap((part) => (part.type === 'refusal' ? [part.refusal as string] : [])).join('');
    const last = messages.at(-1);
    // Two assistant turns in a row (text, then the text of a later item) read as one.
    if (last?.role === 'assistant' && !last.tool_calls && typeof last.content === 'string') last.content += text;
    else messages.push({ role: 'assistant', content: text === '' && refusal ? null : text, ...(refusal ? { refusal } : {}) });
    return;
  }
  if (item.role === 'system' || item.role === 'developer') {
    messages.push({ role: item.role, content: typeof content === 'string' ? content : textOf(content) });
    return;
  }
  messages.push({ role: 'user', content: typeof content === 'string' ? content : content.map(toChatPart) });
}

function textOf(parts: ReadonlyArray<{ type: string; [key: string]: unknown }>): string {
  return parts.flatMap((part) => (typeof part.text === 'string' ? [part.text] : [])).join('');
}

function toChatPart(part: { type: string; [key: string]: unknown }): ContentPart {
  switch (part.type) {
    case 'input_image': {
      const detail = part.detail === 'low' || part.detail === 'high' ? part.detail : 'auto';
      return { type: 'image_url', image_url: { url: part.image_url as string, detail } };
    }
    case 'input_file': {
      const file: Record<string, unknown> = {};
      file.file_data = part.file_data;
      if (typeof part.filename === 'string') file.filename = part.filename;
      return { type: 'file', file };
    }
    default:
      return { type: 'text', text: part.text as string };
  }
}

function toChatTool(tool: ResponsesFunctionTool): FunctionTool {
  const fn: FunctionTool['function'] = { name: tool.name };
  if (tool.description) fn.description = tool.description;
  if (tool.parameters) fn.parameters = tool.parameters;
  if (tool.strict != null) fn.strict = tool.strict;
  return { type: 'function', function: fn };
}

function toChatToolChoice(choice: ResponsesToolChoice): ToolChoice {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

function toResponseFormat(format: TextFormat): ResponseFormat {
  if (format.type !== 'json_schema') return { type: format.type };
  const schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean | null } = { name: format.name, schema: format.schema };
  if (format.description) schema.description = format.description;
  if (format.strict != null) schema.strict = format.strict;
  return { type: 'json_schema', json_schema: schema };
}
