// The request an OpenAI-compatible server is sent: the client's request with the routed model,
// usage always asked for in streams, and the reasoning-model rewrite.
import type { ChatRequest } from '../../core/chat-types.js';
import type { TranslateContext } from '../../core/provider.js';

/**
 * Reasoning models (catalog capability) reject `max_tokens` and non-default sampling: with
 * `reasoningRules` the request is rewritten to `max_completion_tokens` and temperature/top_p are dropped.
 */
export function compatibleBody(request: ChatRequest, context: TranslateContext, reasoningRules: boolean): ChatRequest {
  const body: ChatRequest = { ...request, model: context.model.native_id };
  if (context.stream) {
    body.stream = true;
    body.stream_options = { ...request.stream_options, include_usage: true };
  } else {
    delete body.stream_options;
  }
  if (reasoningRules && context.model.capabilities.reasoning) {
    if (body.max_tokens != null && body.max_completion_tokens == null) body.max_completion_tokens = body.max_tokens;
    delete body.max_tokens;
    delete body.temperature;
    delete body.top_p;
  }
  return body;
}
