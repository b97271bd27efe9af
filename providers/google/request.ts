// OpenAI chat request → Gemini generateContent body. Every field is mapped, dropped or refused by a
// rule of docs/providers/google.md: system/developer messages become `systemInstruction`, tool
// results become `functionResponse` parts named after the call they answer (Gemini has no call
// ids), thought signatures ride along on tool calls, parameters go in `generationConfig`.
import type { ChatMessage, ChatRequest, ContentPart, FunctionTool, ToolCall, ToolChoice } from '../../core/chat-types.js';
import type { CatalogModel } from '../../core/catalog.js';
import { invalidValue, isHttpUrl, outputLimit, parseDataUrl, refuseOpenAIOnly, stopList, textOf, toolArguments } from '../shared/openai-request.js';
import { isObject } from '../shared/json-object.js';
import { toGeminiSchema } from './schema.js';

/** Google's documented placeholder for a function call whose thought signature is unknown (Gemini 3 requires one). */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';
const AUDIO_TYPES: Record<string, string> = { wav: 'audio/wav', mp3: 'audio/mp3' };
const IMAGE_EXTENSIONS: Record<string, string> = { png: 'image/png', gif: 'image/gif', webp: 'image/webp', heic: 'image/heic', heif: 'image/heif' };

type Part = Record<string, unknown>;
interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

/** Models before 2.5 take `responseSchema` only, and are the last to accept penalties. */
export function isLegacyGemini(nativeId: string): boolean {
  return /^gemini-(1\.|2\.0)/.test(nativeId);
}

function requiresSignatures(nativeId: string): boolean {
  return /^gemini-([3-9]|\d{2,})/.test(nativeId);
}

export function toGenerateContentRequest(request: ChatRequest, model: CatalogModel): Record<string, unknown> {
  refuseOpenAIOnly(request, 'google');
  const system: Part[] = [];
  const contents: Content[] = [];
  request.messages.forEach((message, i) => {
    const param = `messages[${i}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push({ text: textOf(message.content) });
        return;
      case 'user':
        return append(contents, 'user', typeof message.content === 'string' ? [{ text: message.content }] : userParts(message, param));
      case 'assistant':
        return append(contents, 'model', modelParts(message, param, requiresSignatures(model.native_id)));
      case 'tool':
        return append(contents, 'user', [functionResponse(request.messages, i)]);
      default:
        throw invalidValue(`${param}.role`, `google takes no '${message.role}' messages; send tool results as 'tool' messages`);
    }
  });

  const body: Record<string, unknown> = {};
  if (system.length > 0) body.systemInstruction = { parts: system };
  body.contents = contents;
  if (request.tools?.length) {
    body.tools = [{ functionDeclarations: request.tools.map(toDeclaration) }];
    const config = functionCallingConfig(request.tool_choice);
    if (config) body.toolConfig = { functionCallingConfig: config };
  }
  const generation = generationConfig(request, model);
  if (Object.keys(generation).length > 0) body.generationConfig = generation;
  return body;
}

function generationConfig(request: ChatRequest, model: CatalogModel): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  if (request.temperature != null) config.temperature = request.temperature;
  if (request.top_p != null) config.topP = request.top_p;
  const limit = outputLimit(request);
  if (limit !== undefined) config.maxOutputTokens = limit;
  const stops = stopList(request);
  if (stops.length > 0) config.stopSequences = stops;
  if (request.n != null) config.candidateCount = request.n;
  if (request.seed != null) config.seed = request.seed;
  // Gemini 2.5 and newer answer any penalty with 400 "Penalty is not enabled": dropped there.
  if (isLegacyGemini(model.native_id)) {
    if (request.presence_penalty != null) config.presencePenalty = request.presence_penalty;
    if (request.frequency_penalty != null) config.frequencyPenalty = request.frequency_penalty;
  }
  const format = request.response_format;
  if (format?.type === 'json_object' || format?.type === 'json_schema') config.responseMimeType = 'application/json';
  if (format?.type === 'json_schema' && format.json_schema.schema) {
    const schema = format.json_schema.schema;
    if (!isLegacyGemini(model.native_id)) config.responseJsonSchema = schema;
    else {
      const converted = toGeminiSchema(schema, true);
      if (!converted) throw invalidValue('response_format.json_schema.schema', `${model.native_id} takes only the OpenAPI subset of JSON Schema (no $ref, oneOf, open additionalProperties)`);
      config.responseSchema = converted;
    }
  }
  return config;
}

/** Consecutive contents of one role become one: the responses to parallel calls must share a turn. */
function append(contents: Content[], role: Content['role'], parts: Part[]): void {
  if (parts.length === 0) return; // an empty model turn is rejected by Gemini and says nothing
  const last = contents.at(-1);
  if (last?.role === role) last.parts.push(...parts);
  else contents.push({ role, parts });
}

function userParts(message: ChatMessage, param: string): Part[] {
  return (message.content as ContentPart[]).map((part, j) => userPart(part, `${param}.content[${j}]`));
}

function userPart(part: ContentPart, param: string): Part {
  const typed = part as unknown as { text: string; image_url: { url: string }; input_audio: { data?: string; format?: string }; file: { file_data?: string } };
  if (part.type === 'text') return { text: typed.text };
  if (part.type === 'image_url') return imagePart(typed.image_url.url, `${param}.image_url`);
  if (part.type === 'input_audio') {
    const mimeType = AUDIO_TYPES[typed.input_audio.format ?? ''];
    if (!mimeType || typeof typed.input_audio.data !== 'string') throw invalidValue(`${param}.input_audio`, 'google takes input_audio as base64 data in wav or mp3 format');
    return { inlineData: { mimeType, data: typed.input_audio.data } };
  }
  if (part.type === 'file') {
    const inline = typeof typed.file.file_data === 'string' ? parseDataUrl(typed.file.file_data) : undefined;
    if (!inline) throw invalidValue(`${param}.file`, 'google takes files as base64 data: URLs (file_data); file ids are OpenAI-only');
    return { inlineData: inline };
  }
  throw invalidValue(`${param}.type`, `google takes no '${part.type}' content`);
}

function imagePart(url: string, param: string): Part {
  const inline = parseDataUrl(url);
  if (inline) return { inlineData: inline };
  if (!isHttpUrl(url)) throw invalidValue(param, 'an image must be an http(s) URL or a base64 data: URL');
  const extension = /\.([a-z0-9]+)$/i.exec(url.split(/[?#]/)[0]!)?.[1]?.toLowerCase() ?? '';
  return { fileData: { mimeType: IMAGE_EXTENSIONS[extension] ?? 'image/jpeg', fileUri: url } };
}

/** Text, then one functionCall per tool call; the first call of a turn carries its thought signature. */
function modelParts(message: ChatMessage, param: string, signaturesRequired: boolean): Part[] {
  const parts: Part[] = [];
  const text = textOf(message.content);
  if (text !== '') parts.push({ text });
  (message.tool_calls ?? []).forEach((call, j) => {
    const part: Part = { functionCall: { name: call.function.name, args: toolArguments(call, `${param}.tool_calls[${j}].function.arguments`) } };
    const signature = thoughtSignature(call) ?? (j === 0 && signaturesRequired ? SKIP_SIGNATURE : undefined);
    if (signature) part.thoughtSignature = signature;
    parts.push(part);
  });
  return parts;
}

/** Where a Gemini thought signature travels through OpenAI clients (as Google's own compatibility API does). */
export function thoughtSignature(call: ToolCall): string | undefined {
  const signature = (call as { extra_content?: { google?: { thought_signature?: unknown } } }).extra_content?.google?.thought_signature;
  return typeof signature === 'string' ? signature : undefined;
}

/** The nearest earlier assistant call with this id names the function; a JSON object result is the response. */
function functionResponse(messages: readonly ChatMessage[], i: number): Part {
  const message = messages[i]!;
  let name: string | undefined;
  for (let k = i - 1; k >= 0 && name === undefined; k--) {
    name = messages[k]!.tool_calls?.find((call) => call.id === message.tool_call_id)?.function.name;
  }
  if (name === undefined) throw invalidValue(`messages[${i}].tool_call_id`, `google matches tool results by function name, and no earlier assistant tool call has id '${message.tool_call_id}'`);
  const text = textOf(message.content);
  let response: unknown;
  try {
    response = JSON.parse(text);
  } catch {
    response = undefined;
  }
  // Google's convention: a result that is not an object goes under "output".
  if (!isObject(response)) response = { output: response === undefined ? text : response };
  return { functionResponse: { name, response } };
}

function toDeclaration(tool: FunctionTool): Record<string, unknown> {
  const declaration: Record<string, unknown> = { name: tool.function.name };
  if (tool.function.description) declaration.description = tool.function.description;
  const parameters = tool.function.parameters;
  if (parameters && !takesNoArguments(parameters)) {
    const converted = toGeminiSchema(parameters);
    if (converted) declaration.parameters = converted;
    else declaration.parametersJsonSchema = parameters;
  }
  return declaration;
}

/** `{}` or an object schema with no properties: Gemini wants no `parameters` at all then (an empty OBJECT is a 400). */
function takesNoArguments(parameters: Record<string, unknown>): boolean {
  if (Object.keys(parameters).length === 0) return true;
  const properties = parameters.properties;
  const none = typeof properties !== 'object' || properties === null || Object.keys(properties).length === 0;
  return parameters.type === 'object' && none && !parameters.additionalProperties;
}

function functionCallingConfig(choice: ToolChoice | undefined): Record<string, unknown> | undefined {
  if (choice === 'auto') return { mode: 'AUTO' };
  if (choice === 'none') return { mode: 'NONE' };
  if (choice === 'required') return { mode: 'ANY' };
  if (typeof choice === 'object') return { mode: 'ANY', allowedFunctionNames: [choice.function.name] };
  return undefined;
}
