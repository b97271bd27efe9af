// A key's own rate limits (Principal.limits), each falling back to the gateway-wide setting, and
// the limiters that enforce them. Limiters count under the key id whatever their limits, so one
// set per distinct combination of limits does (not one per key): a key whose limits change keeps
// its counts in Redis. The sets are kept in a bounded map, most recently used last; an evicted
// in-memory set takes its counts with it, which only a gateway with more than MAX_LIMIT_SETS
// distinct combinations in use at once ever sees.
import type { KeyLimits } from '../../core/context.js';
import type { Limits } from './limiters.js';

export const MAX_LIMIT_SETS = 1000;

/**
 * The limits that apply to a key. A key's own requests_per_minute is a hard cap: the gateway's
 * burst allowance never lifts it above it (its burst is its RPM).
 */
export function keyLimits(global: Limits, own: KeyLimits | undefined): Limits {
  if (!own) return global;
  const rpm = own.requests_per_minute;
  return {
    rpm: rpm ?? global.rpm,
    burst: rpm ?? global.burst,
    rph: own.requests_per_hour ?? global.rph,
    tpm: own.tokens_per_minute ?? global.tpm,
  };
}

/** Limiters per combination of limits, made on first use and kept up to `max` sets. */
export class LimiterSets<Set> {
  private readonly sets = new Map<string, Set>();

  constructor(
    private readonly make: (limits: Limits) => Set,
    private readonly max = MAX_LIMIT_SETS,
  ) {}

  get(limits: Limits): Set {
    const id = `${limits.rpm}:${limits.burst}:${limits.rph}:${limits.tpm}`;
    let set = this.sets.get(id);
    if (set) {
      // Most recently used last: eviction takes the set unused for longest.
      this.sets.delete(id);
    } else {
      set = this.make(limits);
      if (this.sets.size >= this.max) this.sets.delete(this.sets.keys().next().value!);
    }
    this.sets.set(id, set);
    return set;
  }

  get size(): number {
    return this.sets.size;
  }
}
