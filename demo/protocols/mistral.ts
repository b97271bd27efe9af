// Mistral chat completions as the demo simulates it: Bearer auth, POST /v1/chat/completions with
// data-only SSE ending in [DONE], usage on the finish chunk (no separate usage chunk), tool calls
// whole in one delta without index or type, 9-character call ids, and Mistral's error bodies
// (`rate_limited`, "Service tier capacity exceeded") for the simulated failures. POST /v1/embeddings
// answers in OpenAI's list shape (output_dimension for the length), usage with completion_tokens 0.
import { randomBytes } from 'node:crypto';
import type { DemoProtocol } from './types.js';
import { sendJson, startSse } from './types.js';

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export const mistralProtocol: DemoProtocol = {
  provider: 'mistral',
  env: (url, key) => ({ MISTRAL_API_KEY: key, MISTRAL_BASE_URL: url }),
  async serve(req, res, body, simulator, key) {
    if (req.headers.authorization !== `Bearer ${key}`) return sendJson(res, 401, { detail: 'Unauthorized' });
    if (req.method === 'GET' && req.url === '/v1/models') {
      return sendJson(res, 200, { object: 'list', data: [{ id: 'mistral-small-latest', object: 'model', created: 0, owned_by: 'mistralai' }] });
    }
    const embeddings = req.url === '/v1/embeddings';
    if (req.method !== 'POST' || (!embeddings && req.url !== '/v1/chat/completions')) return sendJson(res, 404, { detail: 'Not Found' });
    const failure = simulator.failure('mistral');
    if (failure) {
      await simulator.sleep(50);
      const error =
        failure.status === 429
          ? { object: 'error', message: 'Rate limit exceeded', type: 'rate_limited', param: null, code: '1300' }
          : { object: 'error', message: 'Service tier capacity exceeded for this model.', type: 'invalid_request_error', param: null, code: null };
      return sendJson(res, failure.status, error, failure.retryAfterSeconds ? { 'retry-after': String(failure.retryAfterSeconds) } : {});
    }
    if (embeddings) {
      const inputs: string[] = typeof body.input === 'string' ? [body.input] : body.input;
      const { vectors, promptTokens } = await simulator.embeddings('mistral', body.model, inputs, body.output_dimension);
      return sendJson(res, 200, {
        id: randomBytes(16).toString('hex'),
        object: 'list',
        data: vectors.map((embedding, index) => ({ object: 'embedding', embedding, index })),
        model: body.model,
        usage: { prompt_tokens: promptTokens, total_tokens: promptTokens, completion_tokens: 0 },
      });
    }
    const answer = simulator.answer(body.model, { ...body, tool_choice: body.tool_choice === 'any' ? 'required' : body.tool_choice });
    const id = randomBytes(16).toString('hex');
    const created = Math.floor(Date.now() / 1000);
    const usage = { prompt_tokens: answer.promptTokens, total_tokens: answer.promptTokens + answer.completionTokens, completion_tokens: answer.completionTokens };
    const toolCalls = answer.toolCall ? [{ id: callId(), function: { name: answer.toolCall.name, arguments: answer.toolCall.arguments } }] : null;
    if (!body.stream) {
      await simulator.sleep(answer.ttftMs + answer.interTokenMs * answer.pieces.length);
      return sendJson(res, 200, {
        id,
        created,
        model: body.model,
        usage,
        object: 'chat.completion',
        choices: [{ index: 0, finish_reason: answer.finish, message: { role: 'assistant', tool_calls: toolCalls, content: toolCalls ? '' : answer.text } }],
      });
    }
    const chunk = (delta: unknown, finish: string | null = null, withUsage = false) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }], ...(withUsage ? { usage } : {}) })}\n\n`;
    startSse(res);
    await simulator.sleep(answer.ttftMs);
    res.write(chunk({ role: 'assistant', content: '' }));
    if (toolCalls) {
      res.write(chunk({ content: null, tool_calls: toolCalls }, answer.finish, true));
    } else {
      for (const piece of answer.pieces) {
        if (res.destroyed) return;
        res.write(chunk({ content: piece }));
        await simulator.sleep(answer.interTokenMs);
      }
      res.write(chunk({ content: '' }, answer.finish, true));
    }
    res.end('data: [DONE]\n\n');
  },
};

/** Mistral's tool call ids are 9 alphanumerics (e.g. gSIMJiOkT). */
function callId(): string {
  return Array.from(randomBytes(9), (byte) => ID_ALPHABET[byte % ID_ALPHABET.length]).join('');
}
