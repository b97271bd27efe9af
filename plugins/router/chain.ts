// The failover chain the router hands to the failover step: its own ranking, then the targets the
// client named as fallbacks (fallback_models, fallback_providers). The failover step tries at most
// 1 + MODELGATE_FAILOVER_RETRIES of them; `auto` alone ranks the whole catalog, so a plain cut would
// never reach the client's fallbacks. failoverChain keeps them inside the limit, ahead of the rest
// of the ranking: the limit stays the operator's bound, and what the client named is tried.
import type { Target } from '../../core/context.js';

interface Parts {
  ranked: number;
  named: readonly Target[];
}

/** Where the router's ranking ends in each chain it built (the chain is ctx.candidates). */
const parts = new WeakMap<readonly Target[], Parts>();

const key = (target: Target) => `${target.provider.name}/${target.model.id}`;

/** `targets` without repeats (first occurrence kept), skipping those already in `seen`. */
function unique(targets: readonly Target[], seen = new Set<string>()): Target[] {
  return targets.filter((target) => {
    if (seen.has(key(target))) return false;
    seen.add(key(target));
    return true;
  });
}

/**
 * ctx.candidates: `ranked`, then the `named` fallbacks it does not already hold, each target once.
 * The split is remembered for failoverChain.
 */
export function candidateChain(ranked: readonly Target[], named: readonly Target[]): Target[] {
  const seen = new Set<string>();
  const own = unique(ranked, seen);
  const chain = [...own, ...unique(named, seen)];
  parts.set(chain, { ranked: own.length, named: unique(named) });
  return chain;
}

/**
 * The first `limit` targets to try: the router's best, then the client's named fallbacks, then the
 * rest of the ranking — so with a limit of n and k named fallbacks, the best max(1, n − k) ranked
 * targets come first. A fallback the ranking already placed among those is not tried twice; its
 * slot goes to the next one. A chain the router did not build is cut as it is.
 */
export function failoverChain(candidates: readonly Target[], limit: number): Target[] {
  const split = parts.get(candidates);
  if (!split) return candidates.slice(0, limit);
  const ranked = candidates.slice(0, split.ranked);
  const best = ranked.slice(0, Math.max(1, limit - split.named.length));
  return unique([...best, ...split.named, ...ranked]).slice(0, limit);
}
