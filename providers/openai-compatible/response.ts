// A chat completion from an OpenAI-compatible server, checked for the shape the protocol promises
// and brought back to OpenAI's where compatible servers differ.
import type { ChatCompletion, ToolCall } from '../../core/chat-types.js';
import { badResponse } from '../../core/upstream-error.js';
import { isObject } from '../shared/json-object.js';
import { compatibleFinishReason } from './divergences.js';

export function compatibleCompletion(provider: string, body: unknown): ChatCompletion {
  const completion = body as ChatCompletion;
  if (!isObject(body) || !Array.isArray(completion.choices) || completion.choices.some((c) => !isObject(c) || !isObject(c.message))) {
    throw badResponse(provider, 'response has no choices[].message');
  }
  for (const choice of completion.choices) {
    choice.finish_reason = compatibleFinishReason(provider, choice.finish_reason, false);
    choice.logprobs ??= null;
    choice.message.refusal ??= null;
    if (choice.message.content === undefined) choice.message.content = null;
    if (Array.isArray(choice.message.tool_calls)) choice.message.tool_calls = choice.message.tool_calls.map(withType);
    else if (choice.message.tool_calls === null) delete choice.message.tool_calls; // Mistral-style "no calls"; OpenAI's schema has none
  }
  completion.object = 'chat.completion';
  return completion;
}

/** A tool call as OpenAI sends it always has `type`; some compatible servers leave it out. */
export function withType(call: ToolCall): ToolCall {
  return isObject(call) && call.type === undefined ? { ...call, type: 'function' } : call;
}
