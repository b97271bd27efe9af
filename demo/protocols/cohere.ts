// Cohere v2 chat as the demo simulates it: Bearer auth, POST /v2/chat answering JSON or named SSE
// events (message-start … message-end, no terminator), a tool plan before tool calls (tool_choice
// REQUIRED or NONE), JSON mode with an optional schema (response_format json_object), usage with
// billed_units beside template-inflated token counts as the real API reports them, and Cohere's
// `{"message": …}` error bodies for the simulated failures. POST /v2/embed takes texts and a required
// input_type and answers float vectors with billed_units.input_tokens.
import { randomBytes, randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { ChatMessage, ChatRequest } from '../../core/chat-types.js';
import type { DemoProtocol } from './types.js';
import { sendJson, startSse } from './types.js';

/** Cohere wraps each prompt in its own template: `tokens` counts it, `billed_units` does not. */
const TEMPLATE_TOKENS = 480;
const FINISH = { stop: 'COMPLETE', length: 'MAX_TOKENS', tool_calls: 'TOOL_CALL' } as const;

export const cohereProtocol: DemoProtocol = {
  provider: 'cohere',
  env: (url, key) => ({ COHERE_API_KEY: key, COHERE_BASE_URL: url }),
  async serve(req, res, body, simulator, key) {
    if (req.headers.authorization !== `Bearer ${key}`) return sendJson(res, 401, { message: 'invalid api token' });
    if (req.method === 'GET' && req.url?.startsWith('/v1/models')) {
      return sendJson(res, 200, { models: [{ name: 'command-a-03-2025', endpoints: ['chat'], context_length: 256000 }] });
    }
    const embed = req.url === '/v2/embed';
    if (req.method !== 'POST' || (!embed && req.url !== '/v2/chat')) return sendJson(res, 404, { message: `route ${req.url} not found` });
    if (embed && typeof body.input_type !== 'string') return sendJson(res, 400, { id: randomUUID(), message: 'invalid request: input_type is required for embed models v3 and higher' });
    const failure = simulator.failure('cohere');
    if (failure) {
      await simulator.sleep(50);
      const message = failure.status === 429 ? 'You are using a Trial key, which is limited to 20 API calls / minute (simulated).' : 'internal server error, this has been reported to our developers (simulated)';
      return sendJson(res, failure.status, { id: randomUUID(), message }, failure.retryAfterSeconds ? { 'retry-after': String(failure.retryAfterSeconds) } : {});
    }
    if (embed) {
      const { vectors, promptTokens } = await simulator.embeddings('cohere', body.model, body.texts, body.output_dimension);
      return sendJson(res, 200, {
        id: randomUUID(),
        texts: body.texts,
        embeddings: { float: vectors },
        meta: { api_version: { version: '2' }, billed_units: { input_tokens: promptTokens } },
        response_type: 'embeddings_by_type',
      });
    }
    const answer = simulator.answer(body.model, simulatorView(body));
    const id = randomUUID();
    const usage = {
      billed_units: { input_tokens: answer.promptTokens, output_tokens: answer.completionTokens },
      tokens: { input_tokens: answer.promptTokens + TEMPLATE_TOKENS, output_tokens: answer.completionTokens + 3 },
      cached_tokens: TEMPLATE_TOKENS - 32,
    };
    const call = answer.toolCall && {
      id: `${answer.toolCall.name}_${randomBytes(6).toString('hex')}`,
      type: 'function',
      function: { name: answer.toolCall.name, arguments: answer.toolCall.arguments },
    };
    const plan = call ? `I will use the ${call.function.name} tool to answer this.` : '';
    if (!body.stream) {
      await simulator.sleep(answer.ttftMs + answer.interTokenMs * answer.pieces.length);
      const message = call ? { role: 'assistant', tool_plan: plan, tool_calls: [call] } : { role: 'assistant', content: [{ type: 'text', text: answer.text }] };
      return sendJson(res, 200, { id, message, finish_reason: FINISH[answer.finish], usage });
    }
    startSse(res);
    const send = (type: string, data: Record<string, unknown>) => write(res, type, data);
    await simulator.sleep(answer.ttftMs);
    send('message-start', { id, delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } });
    if (call) {
      for (const piece of plan.match(/\s*\S+/g) ?? []) send('tool-plan-delta', { delta: { message: { tool_plan: piece } } });
      send('tool-call-start', { index: 0, delta: { message: { tool_calls: { ...call, function: { name: call.function.name, arguments: '' } } } } });
      for (const piece of call.function.arguments.match(/.{1,8}/gs) ?? []) send('tool-call-delta', { index: 0, delta: { message: { tool_calls: { function: { arguments: piece } } } } });
      send('tool-call-end', { index: 0 });
    } else {
      send('content-start', { index: 0, delta: { message: { content: { type: 'text', text: '' } } } });
      for (const piece of answer.pieces) {
        if (res.destroyed) return;
        send('content-delta', { index: 0, delta: { message: { content: { text: piece } } } });
        await simulator.sleep(answer.interTokenMs);
      }
      send('content-end', { index: 0 });
    }
    send('message-end', { delta: { finish_reason: FINISH[answer.finish], usage } });
    res.end();
  },
};

function write(res: ServerResponse, type: string, data: Record<string, unknown>): void {
  if (!res.destroyed) res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
}

/** The simulator reads requests in OpenAI's terms: tool documents as text, REQUIRED/NONE, JSON mode with its schema. */
function simulatorView(body: Record<string, any>): ChatRequest {
  const messages = (body.messages as Array<Record<string, any>>).map((m): ChatMessage => {
    if (m.role !== 'tool' || !Array.isArray(m.content)) return m as ChatMessage;
    return { role: 'tool', tool_call_id: m.tool_call_id, content: m.content.map((part: any) => ({ type: 'text', text: String(part.document?.data ?? part.text ?? '') })) };
  });
  const tool_choice = body.tool_choice === 'NONE' ? 'none' : body.tool_choice === 'REQUIRED' ? 'required' : undefined;
  return { model: body.model, messages, tools: body.tools, tool_choice, max_tokens: body.max_tokens, response_format: responseFormat(body.response_format) };
}

/** Cohere has one JSON mode, json_object, which carries the schema when there is one. */
function responseFormat(format: { type?: string; json_schema?: Record<string, unknown> } | undefined): ChatRequest['response_format'] {
  if (format?.type !== 'json_object') return undefined;
  return format.json_schema ? { type: 'json_schema', json_schema: { name: 'output', schema: format.json_schema } } : { type: 'json_object' };
}
