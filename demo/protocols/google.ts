// Gemini as the demo simulates it: `x-goog-api-key` auth (a wrong key is Gemini's 400
// API_KEY_INVALID), POST /v1beta/models/{model}:generateContent and :streamGenerateContent?alt=sse
// (data-only, CRLF-framed, a few tokens per event, cumulative usageMetadata, finishReason last),
// whole functionCall parts (functionCallingConfig AUTO, ANY with allowed names, NONE), JSON mode
// (responseMimeType, with responseJsonSchema or Gemini's responseSchema), thinking tokens on 2.5+
// models, GET /v1beta/models, and simulated 429 (with RetryInfo) and 503 UNAVAILABLE failures with
// Google RPC bodies. :batchEmbedContents answers `{embeddings: [{values}]}` and, like the real API,
// no token usage.
import type { ServerResponse } from 'node:http';
import type { ChatMessage, ChatRequest } from '../../core/chat-types.js';
import type { SimulatedAnswer, Simulator } from '../simulator.js';
import type { DemoProtocol } from './types.js';
import { sendJson, startSse } from './types.js';

const FINISH_REASON = { stop: 'STOP', length: 'MAX_TOKENS', tool_calls: 'STOP' } as const;
const PIECES_PER_EVENT = 4;

export function googleProtocol(): DemoProtocol {
  return {
    provider: 'google',
    env: (url, key) => ({ GOOGLE_API_KEY: key, GOOGLE_BASE_URL: url }),
    async serve(req, res, body, simulator, key) {
      if (req.headers['x-goog-api-key'] !== key) {
        return sendJson(res, 400, rpcError(400, 'API key not valid. Please pass a valid API key.', 'INVALID_ARGUMENT', [
          { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' },
        ]));
      }
      if (req.method === 'GET' && /^\/v1beta\/models(\?|$)/.test(req.url ?? '')) {
        return sendJson(res, 200, { models: [{ name: 'models/gemini-2.5-flash', displayName: 'Gemini 2.5 Flash (simulated)', supportedGenerationMethods: ['generateContent'] }] });
      }
      const route = /^\/v1beta\/models\/([^:/?]+):(generateContent|streamGenerateContent\?alt=sse|batchEmbedContents)$/.exec(req.url ?? '');
      if (req.method !== 'POST' || !route) return sendJson(res, 404, rpcError(404, `${req.url} is not found for API version v1beta.`, 'NOT_FOUND'));
      const model = decodeURIComponent(route[1]!);
      const failure = simulator.failure('google');
      if (failure) {
        await simulator.sleep(50);
        if (failure.status === 429) {
          const delay = `${failure.retryAfterSeconds ?? 1}s`;
          return sendJson(res, 429, rpcError(429, 'Resource has been exhausted (simulated).', 'RESOURCE_EXHAUSTED', [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: delay }]));
        }
        return sendJson(res, 503, rpcError(503, 'The model is overloaded. Please try again later.', 'UNAVAILABLE'));
      }
      if (route[2] === 'batchEmbedContents') return batchEmbed(res, model, body, simulator);
      const answer = simulator.answer(model, asChatRequest(model, body));
      const responseId = `sim${Date.now().toString(36)}`;
      if (route[2] === 'generateContent') {
        await simulator.sleep(answer.ttftMs + answer.interTokenMs * answer.pieces.length);
        return sendJson(res, 200, {
          candidates: [{ content: { role: 'model', parts: parts(answer) }, finishReason: FINISH_REASON[answer.finish], index: 0 }],
          usageMetadata: usage(model, answer, answer.completionTokens),
          modelVersion: model,
          responseId,
        });
      }
      await stream(res, simulator, answer, model, responseId);
    },
  };
}

function rpcError(code: number, message: string, status: string, details?: unknown[]): unknown {
  return { error: { code, message, status, ...(details ? { details } : {}) } };
}

function parts(answer: SimulatedAnswer): unknown[] {
  if (answer.toolCall) return [{ functionCall: { name: answer.toolCall.name, args: JSON.parse(answer.toolCall.arguments) } }];
  return [{ text: answer.text }];
}

/** 2.5 and newer think before answering: about twice the answer's tokens, billed as output. */
function usage(model: string, answer: SimulatedAnswer, candidates: number): Record<string, number> {
  const thoughts = /^gemini-(2\.5|[3-9])/.test(model) ? answer.completionTokens * 2 : 0;
  return {
    promptTokenCount: answer.promptTokens,
    candidatesTokenCount: candidates,
    ...(thoughts ? { thoughtsTokenCount: thoughts } : {}),
    totalTokenCount: answer.promptTokens + candidates + thoughts,
  };
}

async function stream(res: ServerResponse, simulator: Simulator, answer: SimulatedAnswer, model: string, responseId: string): Promise<void> {
  const send = (partsOfEvent: unknown[], candidates: number, finishReason?: string) => {
    const candidate = { content: { role: 'model', parts: partsOfEvent }, ...(finishReason ? { finishReason } : {}), index: 0 };
    res.write(`data: ${JSON.stringify({ candidates: [candidate], usageMetadata: usage(model, answer, candidates), modelVersion: model, responseId })}\r\n\r\n`);
  };
  startSse(res);
  await simulator.sleep(answer.ttftMs);
  let sent = 0;
  if (answer.toolCall) {
    sent = answer.completionTokens;
    send(parts(answer), sent);
  }
  for (let i = 0; i < answer.pieces.length; i += PIECES_PER_EVENT) {
    if (res.destroyed) return;
    const text = answer.pieces.slice(i, i + PIECES_PER_EVENT).join('');
    sent = Math.round((answer.completionTokens * Math.min(i + PIECES_PER_EVENT, answer.pieces.length)) / answer.pieces.length);
    send([{ text }], sent);
    await simulator.sleep(answer.interTokenMs * PIECES_PER_EVENT);
  }
  send([{ text: '' }], answer.completionTokens, FINISH_REASON[answer.finish]);
  res.end();
}

/** The simulator reads an OpenAI-shaped request: the native one, read back. */
function asChatRequest(model: string, body: any): ChatRequest {
  const messages: ChatMessage[] = [];
  const system = (body.systemInstruction?.parts ?? []).map((part: { text?: string }) => part.text ?? '').join('\n');
  if (system) messages.push({ role: 'system', content: system });
  for (const content of body.contents ?? []) {
    for (const part of content.parts ?? []) {
      if (part.functionResponse) messages.push({ role: 'tool', tool_call_id: 'sim', content: JSON.stringify(part.functionResponse.response) });
      else if (typeof part.text === 'string') messages.push({ role: content.role === 'model' ? 'assistant' : 'user', content: part.text });
    }
  }
  const declarations: Array<{ name: string; description?: string; parameters?: unknown; parametersJsonSchema?: Record<string, unknown> }> = (body.tools ?? []).flatMap(
    (tool: { functionDeclarations?: unknown[] }) => tool.functionDeclarations ?? [],
  );
  const calling = body.toolConfig?.functionCallingConfig as { mode?: string; allowedFunctionNames?: string[] } | undefined;
  const allowed = calling?.mode === 'ANY' && calling.allowedFunctionNames?.length ? new Set(calling.allowedFunctionNames) : undefined;
  const tools = declarations
    .filter((declaration) => !allowed || allowed.has(declaration.name))
    .map((declaration) => ({
      type: 'function' as const,
      function: { name: declaration.name, description: declaration.description, parameters: declaration.parametersJsonSchema ?? (fromGeminiSchema(declaration.parameters) as Record<string, unknown> | undefined) },
    }));
  return { model, messages, max_tokens: body.generationConfig?.maxOutputTokens, tools, tool_choice: toolChoice(calling?.mode), response_format: responseFormat(body.generationConfig) };
}

/** AUTO, ANY (restricted above to allowedFunctionNames) and NONE in OpenAI's words. */
function toolChoice(mode: string | undefined): ChatRequest['tool_choice'] {
  if (mode === 'NONE') return 'none';
  if (mode === 'ANY') return 'required';
  return mode === 'AUTO' ? 'auto' : undefined;
}

/** JSON mode is responseMimeType application/json; a schema comes as JSON Schema (2.5+) or as Gemini's Schema (older models). */
function responseFormat(config: Record<string, any> | undefined): ChatRequest['response_format'] {
  if (config?.responseMimeType !== 'application/json') return undefined;
  const schema = config.responseJsonSchema ?? fromGeminiSchema(config.responseSchema);
  return schema ? { type: 'json_schema', json_schema: { name: 'output', schema } } : { type: 'json_object' };
}

/** Gemini's Schema spells types in upper case and nullability as `nullable`; the simulator reads JSON Schema. */
function fromGeminiSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(fromGeminiSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'type' && typeof value === 'string') out.type = value.toLowerCase();
    else if (key === 'properties' && typeof value === 'object' && value !== null) {
      out.properties = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, fromGeminiSchema(property)]));
    } else if (key !== 'nullable' && key !== 'propertyOrdering') out[key] = fromGeminiSchema(value);
  }
  if ((schema as { nullable?: unknown }).nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}

/** Each request must name the model of the URL, as the Gemini API checks; one vector per request, no usage. */
async function batchEmbed(res: ServerResponse, model: string, body: any, simulator: Simulator): Promise<void> {
  const requests: Array<{ model?: string; content?: { parts?: Array<{ text?: string }> }; outputDimensionality?: number }> = body?.requests ?? [];
  const wrong = requests.findIndex((request) => request.model !== `models/${model}`);
  if (requests.length === 0 || wrong >= 0) {
    const what = requests.length === 0 ? 'requests must not be empty' : `requests[${wrong}].model must be models/${model}`;
    return sendJson(res, 400, rpcError(400, `* BatchEmbedContentsRequest.${what}`, 'INVALID_ARGUMENT'));
  }
  const texts = requests.map((request) => (request.content?.parts ?? []).map((part) => part.text ?? '').join(''));
  const { vectors } = await simulator.embeddings('google', model, texts, requests[0]!.outputDimensionality);
  sendJson(res, 200, { embeddings: vectors.map((values) => ({ values })) });
}
