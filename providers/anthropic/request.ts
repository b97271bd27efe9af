// OpenAI chat request → Anthropic Messages request body. Every field is mapped, dropped or refused
// by a rule of docs/providers/anthropic.md: system/developer messages are hoisted into `system`, tool
// messages become `tool_result` blocks, `max_tokens` is always set, sampling follows the model's rules.
import type { ChatMessage, ChatRequest, ContentPart, FunctionTool, ToolChoice } from '../../core/chat-types.js';
import type { CatalogModel } from '../../core/catalog.js';
import { invalidValue, isHttpUrl, outputLimit, parseDataUrl, refuseOpenAIOnly, stopList, textOf, toolArguments } from '../shared/openai-request.js';

/** `max_tokens` when neither the client nor the catalog gives one (a bare model). */
const FALLBACK_MAX_TOKENS = 4096;
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
/** JSON mode has no native switch on Anthropic; the instruction is the documented best effort. */
export const JSON_MODE_INSTRUCTION = 'Respond only with a single valid JSON object, without any text before or after it.';

type Block = Record<string, unknown> & { type: string };
interface NativeMessage {
  role: 'user' | 'assistant';
  content: string | Block[];
}

export function toMessagesRequest(request: ChatRequest, model: CatalogModel, stream: boolean): Record<string, unknown> {
  refuseOpenAIOnly(request, 'anthropic');
  const system: string[] = [];
  const messages: NativeMessage[] = [];
  request.messages.forEach((message, i) => {
    const param = `messages[${i}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(textOf(message.content));
        return;
      case 'user':
        return append(messages, { role: 'user', content: typeof message.content === 'string' ? message.content : userBlocks(message, param) });
      case 'assistant': {
        const blocks = assistantBlocks(message, param);
        if (blocks.length === 0) return; // an empty assistant turn is rejected by Anthropic and says nothing
        return append(messages, { role: 'assistant', content: blocks.length === 1 && blocks[0]!.type === 'text' ? (blocks[0]!.text as string) : blocks });
      }
      case 'tool':
        return append(messages, { role: 'user', content: [toolResult(message)] });
      default:
        throw invalidValue(`${param}.role`, `anthropic takes no '${message.role}' messages; send tool results as 'tool' messages`);
    }
  });

  const body: Record<string, unknown> = {
    model: model.native_id,
    max_tokens: outputLimit(request) ?? model.max_output_tokens ?? FALLBACK_MAX_TOKENS,
  };
  if (stream) body.stream = true;
  const format = request.response_format;
  if (format?.type === 'json_object' || (format?.type === 'json_schema' && !format.json_schema.schema)) system.push(JSON_MODE_INSTRUCTION);
  if (system.length === 1) body.system = system[0];
  else if (system.length > 1) body.system = system.map((text) => ({ type: 'text', text }));
  body.messages = messages;
  Object.assign(body, sampling(request, model));
  const stops = stopList(request).filter((stop) => stop.trim() !== ''); // whitespace-only stops are a 400 on Anthropic
  if (stops.length > 0) body.stop_sequences = stops;
  if (request.user) body.metadata = { user_id: request.user };
  if (request.tools?.length) {
    body.tools = request.tools.map(toNativeTool);
    const choice = toolChoice(request.tool_choice, request.parallel_tool_calls);
    if (choice) body.tool_choice = choice;
  }
  if (format?.type === 'json_schema' && format.json_schema.schema) body.output_config = { format: { type: 'json_schema', schema: format.json_schema.schema } };
  return body;
}

/**
 * Anthropic's temperature range is 0..1 (OpenAI's 0..2: larger values are clamped to 1); Claude 4.5
 * and newer reject `temperature` together with `top_p` (then top_p is dropped); models from 4.7 on
 * reject any sampling setting but the default (both dropped).
 */
function sampling(request: ChatRequest, model: CatalogModel): { temperature?: number; top_p?: number } {
  if (rejectsSampling(model.native_id)) return {};
  if (request.temperature != null) return { temperature: Math.min(request.temperature, 1) };
  if (request.top_p != null) return { top_p: request.top_p };
  return {};
}

/** Claude versions from 4.7 on (opus-4-7, opus-4-8, sonnet-5, fable-5, …) take no sampling parameters. */
export function rejectsSampling(nativeId: string): boolean {
  const match = /^claude-[a-z]+-(\d+)(?:-(\d{1,2}))?(?:-|$)/.exec(nativeId);
  if (!match) return false;
  const major = Number(match[1]);
  const minor = Number(match[2] ?? 0);
  return major > 4 || (major === 4 && minor >= 7);
}

/** Consecutive turns of one role become one turn: tool results of parallel calls must share a user turn. */
function append(messages: NativeMessage[], next: NativeMessage): void {
  const last = messages.at(-1);
  if (!last || last.role !== next.role) {
    messages.push(next);
    return;
  }
  last.content = [...asBlocks(last.content), ...asBlocks(next.content)];
}

function asBlocks(content: string | Block[]): Block[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

function userBlocks(message: ChatMessage, param: string): Block[] {
  return (message.content as ContentPart[]).map((part, j) => userBlock(part, `${param}.content[${j}]`));
}

function userBlock(part: ContentPart, param: string): Block {
  if (part.type === 'text') return { type: 'text', text: (part as { text: string }).text };
  if (part.type === 'image_url') return imageBlock((part as { image_url: { url: string } }).image_url.url, `${param}.image_url`);
  if (part.type === 'file') return documentBlock(part as unknown as { file: { file_data?: string } }, `${param}.file`);
  throw invalidValue(`${param}.type`, `anthropic takes no '${part.type}' content`);
}

function imageBlock(url: string, param: string): Block {
  const inline = parseDataUrl(url);
  if (inline) {
    if (!IMAGE_TYPES.has(inline.mimeType)) throw invalidValue(param, `anthropic takes JPEG, PNG, GIF and WebP images, not ${inline.mimeType}`);
    return { type: 'image', source: { type: 'base64', media_type: inline.mimeType, data: inline.data } };
  }
  if (isHttpUrl(url)) return { type: 'image', source: { type: 'url', url } };
  throw invalidValue(param, 'an image must be an http(s) URL or a base64 data: URL');
}

function documentBlock(part: { file: { file_data?: string } }, param: string): Block {
  const inline = typeof part.file.file_data === 'string' ? parseDataUrl(part.file.file_data) : undefined;
  if (inline?.mimeType !== 'application/pdf') throw invalidValue(param, 'anthropic takes files only as base64 PDF data (file_data); file ids are OpenAI-only');
  return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: inline.data } };
}

function assistantBlocks(message: ChatMessage, param: string): Block[] {
  const blocks: Block[] = [];
  const text = textOf(message.content);
  if (text !== '') blocks.push({ type: 'text', text });
  (message.tool_calls ?? []).forEach((call, j) => {
    blocks.push({ type: 'tool_use', id: call.id, name: call.function.name, input: toolArguments(call, `${param}.tool_calls[${j}].function.arguments`) });
  });
  return blocks;
}

/** A result with no text goes without content: Anthropic rejects an empty text block. */
function toolResult(message: ChatMessage): Block {
  const text = textOf(message.content);
  const block: Block = { type: 'tool_result', tool_use_id: message.tool_call_id };
  if (text !== '') block.content = typeof message.content === 'string' ? text : asBlocks(text);
  return block;
}

function toNativeTool(tool: FunctionTool): Record<string, unknown> {
  const native: Record<string, unknown> = { name: tool.function.name };
  if (tool.function.description) native.description = tool.function.description;
  native.input_schema = tool.function.parameters ?? { type: 'object', properties: {} };
  if (tool.function.strict === true) native.strict = true;
  return native;
}

function toolChoice(choice: ToolChoice | undefined, parallel: boolean | undefined): Record<string, unknown> | undefined {
  const single = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any', ...single };
  if (typeof choice === 'object') return { type: 'tool', name: choice.function.name, ...single };
  if (choice === 'auto' || parallel === false) return { type: 'auto', ...single };
  return undefined;
}
