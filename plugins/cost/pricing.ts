// What a request on a model is estimated to cost and what it is billed, in USD and in the integer
// nano-dollars the budget stores count in (sums of floats drift; 1e-9 USD is finer than any token
// price, and 2^53 nano-dollars is $9M). Models the catalog has no price for are refused unless the
// operator allows them, and then priced at the operator's default.
import { costOf, isPriced, type CatalogModel } from '../../core/catalog.js';
import type { RequestContext } from '../../core/context.js';
import { estimateCost } from '../../core/estimate.js';
import { consumedUsage } from '../../core/consumed.js';

export interface UnpricedPolicy {
  allowed: boolean;
  /** USD per token. */
  input: number;
  output: number;
}

export const NANO = 1e9;

/** USD → nano-dollars, rounded up so a bill is never under-counted. */
export function toNano(usd: number): number {
  return Math.ceil(usd * NANO - 1e-6);
}

export function toUsd(nano: number): number {
  return nano / NANO;
}

/** The model with prices to bill by: its own, the default for an allowed unpriced model, or none. */
export function billable(model: CatalogModel, unpriced: UnpricedPolicy): CatalogModel | undefined {
  if (isPriced(model)) return model;
  if (!unpriced.allowed) return undefined;
  return { ...model, price: { input: unpriced.input, output: unpriced.output, cached_input: null, cache_write: null } };
}

/** USD the request is expected to cost on `model`: counted prompt tokens plus its expected output. */
export function estimate(ctx: RequestContext, model: CatalogModel): number {
  return estimateCost(ctx.chat!, model) ?? 0;
}

/** USD the finished request costs on `model`: reported usage, else what was generated; 0 on a cache hit. */
export function bill(ctx: RequestContext, model: CatalogModel): number {
  const usage = consumedUsage(ctx);
  return usage ? (costOf(model, usage) ?? 0) : 0;
}
