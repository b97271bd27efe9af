// The cost estimate of a chat request on a model, shared by routing (ranking, the per-request cap)
// and the cost guard (reservations): counted prompt tokens plus the expected output (max_tokens,
// else MODELGATE_DEFAULT_OUTPUT_TOKENS, never more than the model can produce), at catalog prices.
import { costOf, type CatalogModel } from './catalog.js';
import type { ChatState } from './context.js';

/** Estimated USD; undefined when the model has no known price. */
export function estimateCost(chat: ChatState, model: CatalogModel): number | undefined {
  const output = Math.min(chat.expectedOutputTokens, model.max_output_tokens ?? Infinity);
  const prompt = chat.promptTokens;
  return costOf(model, { prompt_tokens: prompt, completion_tokens: output, total_tokens: prompt + output });
}

/**
 * The per-request cost cap in force: the operator's MODELGATE_MAX_COST_PER_REQUEST, or the client's
 * `modelgate.routing.max_cost_per_request` when lower — a client may tighten the cap, never lift it.
 */
export function perRequestCap(chat: ChatState, operatorCap: number): number {
  const asked = (chat.overrides.routing as { max_cost_per_request?: number } | undefined)?.max_cost_per_request;
  return asked === undefined ? operatorCap : Math.min(asked, operatorCap);
}
