// Anthropic Messages as the demo simulates it: `x-api-key` (or Bearer) auth, POST /v1/messages
// answered as a Message or as named SSE events (message_start, content blocks with pings,
// message_delta with the stop reason and usage, message_stop), tool_use blocks (tool_choice auto,
// any, tool, none), structured output (output_config.format) and JSON asked for in the system
// prompt, GET /v1/models, and simulated 429 (with retry-after), 529 overloaded and 5xx failures
// with Anthropic's bodies.
import type { ServerResponse } from 'node:http';
import type { ChatMessage, ChatRequest } from '../../core/chat-types.js';
import type { SimulatedAnswer, Simulator } from '../simulator.js';
import type { DemoProtocol } from './types.js';
import { sendJson, startSse } from './types.js';

const STOP_REASON = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use' } as const;
const FAILURE_TYPE: Record<number, string> = { 429: 'rate_limit_error', 529: 'overloaded_error' };

export function anthropicProtocol(): DemoProtocol {
  return {
    provider: 'anthropic',
    env: (url, key) => ({ ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: url }),
    async serve(req, res, body, simulator, key) {
      if (req.headers['x-api-key'] !== key && req.headers.authorization !== `Bearer ${key}`) {
        return sendJson(res, 401, error('authentication_error', 'invalid x-api-key'));
      }
      if (req.method === 'GET' && req.url?.startsWith('/v1/models')) {
        const model = { type: 'model', id: 'claude-sonnet-4-5-20250929', display_name: 'Claude Sonnet 4.5 (simulated)', created_at: '2025-09-29T00:00:00Z' };
        return sendJson(res, 200, { data: [model], has_more: false, first_id: model.id, last_id: model.id });
      }
      if (req.method !== 'POST' || req.url !== '/v1/messages') return sendJson(res, 404, error('not_found_error', `Not found: ${req.url}`));
      const failure = simulator.failure('anthropic');
      if (failure) {
        await simulator.sleep(50);
        const type = FAILURE_TYPE[failure.status] ?? 'api_error';
        const message = failure.status === 529 ? 'Overloaded' : failure.status === 429 ? 'Rate limit exceeded (simulated).' : 'Internal server error (simulated).';
        return sendJson(res, failure.status, error(type, message), failure.retryAfterSeconds ? { 'retry-after': String(failure.retryAfterSeconds) } : {});
      }
      const answer = simulator.answer(body.model, asChatRequest(body));
      const id = `msg_sim${Date.now().toString(36)}`;
      const usage = { input_tokens: answer.promptTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: answer.completionTokens };
      if (!body.stream) {
        await simulator.sleep(answer.ttftMs + answer.interTokenMs * answer.pieces.length);
        return sendJson(res, 200, { id, type: 'message', role: 'assistant', model: body.model, content: contentBlocks(answer), stop_reason: STOP_REASON[answer.finish], stop_sequence: null, usage });
      }
      await stream(res, simulator, answer, { id, model: body.model, usage });
    },
  };
}

function error(type: string, message: string): unknown {
  return { type: 'error', error: { type, message }, request_id: `req_sim${Date.now().toString(36)}` };
}

function contentBlocks(answer: SimulatedAnswer): unknown[] {
  if (answer.toolCall) return [{ type: 'tool_use', id: toolUseId(answer), name: answer.toolCall.name, input: JSON.parse(answer.toolCall.arguments) }];
  return [{ type: 'text', text: answer.text }];
}

function toolUseId(answer: SimulatedAnswer): string {
  return `toolu_${answer.toolCall!.id.replace(/^call_/, '')}`;
}

async function stream(res: ServerResponse, simulator: Simulator, answer: SimulatedAnswer, message: { id: string; model: string; usage: Record<string, number> }): Promise<void> {
  const send = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  startSse(res);
  await simulator.sleep(answer.ttftMs);
  send('message_start', {
    message: { id: message.id, type: 'message', role: 'assistant', model: message.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...message.usage, output_tokens: 1 } },
  });
  if (answer.toolCall) {
    send('content_block_start', { index: 0, content_block: { type: 'tool_use', id: toolUseId(answer), name: answer.toolCall.name, input: {} } });
    const args = answer.toolCall.arguments;
    const half = Math.ceil(args.length / 2);
    for (const partial of ['', args.slice(0, half), args.slice(half)]) send('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: partial } });
  } else {
    send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    send('ping', {});
    for (const piece of answer.pieces) {
      if (res.destroyed) return;
      send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } });
      await simulator.sleep(answer.interTokenMs);
    }
  }
  send('content_block_stop', { index: 0 });
  send('message_delta', { delta: { stop_reason: STOP_REASON[answer.finish], stop_sequence: null }, usage: { output_tokens: answer.completionTokens } });
  send('message_stop', {});
  res.end();
}

/** The simulator reads an OpenAI-shaped request: the native one, read back. */
function asChatRequest(body: any): ChatRequest {
  const messages: ChatMessage[] = [];
  const system = typeof body.system === 'string' ? body.system : (body.system ?? []).map((b: { text: string }) => b.text).join('\n');
  if (system) messages.push({ role: 'system', content: system });
  for (const message of body.messages ?? []) {
    const blocks: Array<{ type: string; text?: string; content?: unknown }> = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    for (const block of blocks.filter((b) => b.type === 'tool_result')) {
      messages.push({ role: 'tool', tool_call_id: 'sim', content: typeof block.content === 'string' ? block.content : JSON.stringify(block.content) });
    }
    const text = blocks.filter((b) => b.type === 'text').map((b) => b.text).join('');
    if (text) messages.push({ role: message.role, content: text });
  }
  return {
    model: body.model,
    messages,
    max_tokens: body.max_tokens,
    tools: (body.tools ?? []).map((tool: { name: string; description?: string; input_schema?: Record<string, unknown> }) => ({
      type: 'function' as const,
      function: { name: tool.name, description: tool.description, parameters: tool.input_schema },
    })),
    tool_choice: toolChoice(body.tool_choice),
    response_format: responseFormat(body, system),
  };
}

/** Anthropic's {type: auto | any | tool | none} in OpenAI's words. */
function toolChoice(choice: { type?: string; name?: string } | undefined): ChatRequest['tool_choice'] {
  if (choice?.type === 'none') return 'none';
  if (choice?.type === 'any') return 'required';
  if (choice?.type === 'tool' && choice.name) return { type: 'function', function: { name: choice.name } };
  return choice?.type === 'auto' ? 'auto' : undefined;
}

/**
 * Structured output is native (output_config.format with a schema). Plain JSON mode is not: Claude
 * is asked in the system prompt, and the simulated Claude, like the real one, follows a system
 * prompt that tells it to answer in JSON.
 */
const JSON_REQUEST = /\b(respond|reply|answer|output|return)\w*\b[^.\n]*\bJSON\b/i;

function responseFormat(body: any, system: string): ChatRequest['response_format'] {
  const format = body.output_config?.format;
  if (format?.type === 'json_schema' && format.schema) return { type: 'json_schema', json_schema: { name: 'output', schema: format.schema } };
  // Sentence by sentence, each cut short: one long sentence would make the pattern rescan quadratically.
  if (system.split(/[.\n]/).some((sentence) => JSON_REQUEST.test(sentence.slice(0, 2000)))) return { type: 'json_object' };
  return undefined;
}
