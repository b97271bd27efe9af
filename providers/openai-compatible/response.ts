// A chat completion from an OpenAI-compatible server, checked for the shape the protocol promises
// and brought back to OpenAI's where compatible servers differ.
import type { ChatCompletion, ToolCall } from '../../core/chat-types.js';
import { badResponse } from '../../core/upstream-error.js';
import { receivedAsIs } from '../../core/provider.js';
import { isObject } from '../shared/json-object.js';
import { compatibleFinishReason } from './divergences.js';

/**
 * Brought to OpenAI's shape in place. With `asSent` (OpenAI itself), a body that needed nothing is
 * marked receivedAsIs, so the gateway sends the provider's bytes as they came.
 */
export function compatibleCompletion(provider: string, body: unknown, asSent = false): ChatCompletion {
  const completion = body as ChatCompletion;
  if (!isObject(body) || !Array.isArray(completion.choices) || completion.choices.some((c) => !isObject(c) || !isObject(c.message))) {
    throw badResponse(provider, 'response has no choices[].message');
  }
  let changed = completion.object !== 'chat.completion';
  for (const choice of completion.choices) {
    const reason = compatibleFinishReason(provider, choice.finish_reason, false);
    const message = choice.message;
    if (reason !== choice.finish_reason || choice.logprobs === undefined || message.refusal === undefined || message.content === undefined || message.tool_calls === null) changed = true;
    choice.finish_reason = reason;
    choice.logprobs ??= null;
    message.refusal ??= null;
    if (message.content === undefined) message.content = null;
    if (Array.isArray(message.tool_calls)) {
      const calls = message.tool_calls.map(withType);
      if (calls.some((call, i) => call !== message.tool_calls![i])) changed = true;
      message.tool_calls = calls;
    } else if (message.tool_calls === null) delete message.tool_calls; // Mistral-style "no calls"; OpenAI's schema has none
  }
  completion.object = 'chat.completion';
  return changed || !asSent ? completion : receivedAsIs(completion);
}

/** A tool call as OpenAI sends it always has `type`; some compatible servers leave it out. */
export function withType(call: ToolCall): ToolCall {
  return isObject(call) && call.type === undefined ? { ...call, type: 'function' } : call;
}
