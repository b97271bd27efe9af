// The cost estimate of a chat request on a model, shared by routing (ranking, the per-request cap)
// and the cost guard (reservations): counted prompt tokens (images at the model's own maximum) plus the expected output (max_tokens,
// else MODELGATE_DEFAULT_OUTPUT_TOKENS, never more than the model can produce), at catalog prices.
import { costOf, type CatalogModel } from './catalog.js';
import type { ChatState } from './context.js';
import { IMAGE_TOKENS, imageTokens } from './image-tokens.js';

/** Estimated USD; undefined when the model has no known price. */
export function estimateCost(chat: ChatState, model: CatalogModel): number | undefined {
  const output = Math.min(chat.expectedOutputTokens, model.max_output_tokens ?? Infinity);
  const prompt = promptTokensOn(chat, model);
  return costOf(model, { prompt_tokens: prompt, completion_tokens: output, total_tokens: prompt + output });
}

/** The estimated prompt on `model`: its images at what the model bills for one at most (core/image-tokens.ts). */
export function promptTokensOn(chat: ChatState, model: CatalogModel | undefined): number {
  if (!chat.images || !model) return chat.promptTokens;
  return chat.promptTokens + chat.images * Math.max(0, imageTokens(model) - IMAGE_TOKENS);
}

/**
 * The per-request cost cap in force: the operator's MODELGATE_MAX_COST_PER_REQUEST, or the client's
 * `modelgate.routing.max_cost_per_request` when lower — a client may tighten the cap, never lift it.
 */
export function perRequestCap(chat: ChatState, operatorCap: number): number {
  const asked = (chat.overrides.routing as { max_cost_per_request?: number } | undefined)?.max_cost_per_request;
  return asked === undefined ? operatorCap : Math.min(asked, operatorCap);
}
