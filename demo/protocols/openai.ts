// OpenAI Chat Completions (also what the demo's `custom` server speaks): Bearer auth,
// /v1/chat/completions with data-only SSE ending in [DONE], usage chunk when asked, /v1/models,
// /v1/embeddings (float or base64, usage prompt_tokens), and for OpenAI /v1/responses (openai-responses.ts),
// tool calls and response_format as OpenAI takes them. Like the real API, OpenAI (not `custom`)
// refuses JSON mode when no message mentions JSON: a newcomer meets that rule here first.
import type { DemoProtocol } from './types.js';
import { sendJson, startSse } from './types.js';
import { serveResponses } from './openai-responses.js';

export function openAIProtocol(provider: 'openai' | 'custom'): DemoProtocol {
  return {
    provider,
    env: (url, key): Record<string, string> =>
      provider === 'openai'
        ? { OPENAI_API_KEY: key, OPENAI_BASE_URL: `${url}/v1` }
        : { CUSTOM_API_KEY: key, CUSTOM_BASE_URL: `${url}/v1`, CUSTOM_MODELS: 'llama-3.1-8b-instruct' },
    async serve(req, res, body, simulator, key) {
      if (req.headers.authorization !== `Bearer ${key}`) {
        return sendJson(res, 401, { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
      }
      if (req.method === 'GET' && req.url?.endsWith('/models')) {
        return sendJson(res, 200, { object: 'list', data: [{ id: 'simulated', object: 'model', created: 0, owned_by: provider }] });
      }
      if (provider === 'openai' && body?.response_format?.type === 'json_object' && !JSON.stringify(body.messages ?? []).toLowerCase().includes('json')) {
        return sendJson(res, 400, {
          error: { message: "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.", type: 'invalid_request_error', param: 'messages', code: null },
        });
      }
      const failure = simulator.failure(provider);
      if (failure) {
        await simulator.sleep(50);
        const rate = failure.status === 429;
        return sendJson(
          res,
          failure.status,
          rate
            ? { error: { message: 'Rate limit reached (simulated).', type: 'requests', param: null, code: 'rate_limit_exceeded' } }
            : { error: { message: 'Our servers are currently overloaded (simulated).', type: 'service_unavailable_error', param: null, code: 'server_is_overloaded' } },
          failure.retryAfterSeconds ? { 'retry-after': String(failure.retryAfterSeconds) } : {},
        );
      }
      if (provider === 'openai' && req.method === 'POST' && req.url?.endsWith('/responses')) return serveResponses(res, body, simulator);
      if (req.url?.endsWith('/embeddings')) {
        const inputs = typeof body.input === 'string' || typeof body.input?.[0] === 'number' ? [body.input] : (body.input ?? []);
        const { vectors, promptTokens } = await simulator.embeddings(provider, body.model, inputs, body.dimensions);
        const encode = (vector: number[]) => (body.encoding_format === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector);
        return sendJson(res, 200, {
          object: 'list',
          data: vectors.map((vector, index) => ({ object: 'embedding', index, embedding: encode(vector) })),
          model: body.model,
          usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
        });
      }
      const answer = simulator.answer(body.model, body);
      const id = `chatcmpl-sim${Date.now().toString(36)}`;
      const created = Math.floor(Date.now() / 1000);
      const usage = { prompt_tokens: answer.promptTokens, completion_tokens: answer.completionTokens, total_tokens: answer.promptTokens + answer.completionTokens };
      const toolCalls = answer.toolCall
        ? [{ id: answer.toolCall.id, type: 'function', function: { name: answer.toolCall.name, arguments: answer.toolCall.arguments } }]
        : undefined;
      if (!body.stream) {
        await simulator.sleep(answer.ttftMs + answer.interTokenMs * answer.pieces.length);
        return sendJson(res, 200, {
          id,
          object: 'chat.completion',
          created,
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: answer.toolCall ? null : answer.text, refusal: null, tool_calls: toolCalls }, logprobs: null, finish_reason: answer.finish }],
          usage,
        });
      }
      const withUsage = body.stream_options?.include_usage === true;
      const chunk = (delta: unknown, finish: string | null = null) =>
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(withUsage ? { usage: null } : {}) })}\n\n`;
      startSse(res);
      await simulator.sleep(answer.ttftMs);
      res.write(chunk({ role: 'assistant', content: '' }));
      if (answer.toolCall) {
        res.write(chunk({ tool_calls: [{ index: 0, ...toolCalls![0], function: { name: answer.toolCall.name, arguments: '' } }] }));
        res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: answer.toolCall.arguments } }] }));
      }
      for (const piece of answer.pieces) {
        if (res.destroyed) return;
        res.write(chunk({ content: piece }));
        await simulator.sleep(answer.interTokenMs);
      }
      res.write(chunk({}, answer.finish));
      if (withUsage) res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage })}\n\n`);
      res.end('data: [DONE]\n\n');
    },
  };
}
