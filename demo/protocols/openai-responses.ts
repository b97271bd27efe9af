// The simulated OpenAI's Responses endpoint (POST /v1/responses), which the gateway uses for OpenAI
// models asked through its own /v1/responses: the request read as the gateway reads one, answered by
// the simulator, and written back as a Response or as the Responses API's typed events — with the
// pacing of the chat simulation (first token, then token by token).
import type { ServerResponse } from 'node:http';
import { readResponsesRequest, toChatRequest } from '../../core/responses/request.js';
import { responseOf } from '../../core/responses/output.js';
import { ResponseEventWriter } from '../../core/responses/events.js';
import { SseWriter } from '../../core/sse.js';
import type { ChatCompletion, Usage } from '../../core/chat-types.js';
import { isGatewayError } from '../../core/errors.js';
import type { Simulator } from '../simulator.js';
import { sendJson } from './types.js';

export async function serveResponses(res: ServerResponse, body: unknown, simulator: Simulator): Promise<void> {
  let chat;
  let request;
  try {
    request = readResponsesRequest(body);
    chat = toChatRequest(request, []);
  } catch (error) {
    if (!isGatewayError(error)) throw error;
    return sendJson(res, error.status, error.toBody());
  }
  const answer = simulator.answer(request.model, chat);
  const usage: Usage = { prompt_tokens: answer.promptTokens, completion_tokens: answer.completionTokens, total_tokens: answer.promptTokens + answer.completionTokens };
  const call = answer.toolCall && { id: answer.toolCall.id, type: 'function' as const, function: { name: answer.toolCall.name, arguments: answer.toolCall.arguments } };
  const frame = { id: `resp_${Date.now().toString(16).padStart(32, '0')}`, createdAt: Math.floor(Date.now() / 1000), request, model: request.model };
  if (!request.stream) {
    await simulator.sleep(answer.ttftMs + answer.interTokenMs * answer.pieces.length);
    const completion: ChatCompletion = {
      id: frame.id,
      object: 'chat.completion',
      created: frame.createdAt,
      model: request.model,
      choices: [{ index: 0, message: { role: 'assistant', content: call ? null : answer.text, refusal: null, ...(call ? { tool_calls: [call] } : {}) }, logprobs: null, finish_reason: answer.finish }],
    };
    return sendJson(res, 200, responseOf(frame, completion, usage));
  }
  const events = new ResponseEventWriter(new SseWriter(res), () => frame, () => usage, () => undefined);
  events.start(200, {});
  await simulator.sleep(answer.ttftMs);
  const chunk = (delta: Record<string, unknown>, finish: ChatCompletion['choices'][number]['finish_reason'] | null = null) => ({
    id: frame.id,
    object: 'chat.completion.chunk' as const,
    created: frame.createdAt,
    model: request.model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  if (call) events.send(chunk({ tool_calls: [{ index: 0, ...call }] }));
  else {
    for (const piece of answer.pieces) {
      if (res.destroyed) return;
      events.send(chunk({ content: piece }));
      await simulator.sleep(answer.interTokenMs);
    }
  }
  events.send(chunk({}, answer.finish));
  await events.done();
}
