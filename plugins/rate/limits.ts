// The rate-limit algorithm, one decision per request, for one API key. Three limits are checked
// together and a request is admitted only if all three have room; a refused request consumes
// nothing, so a client retrying while limited does not eat its own hourly allowance.
//   requests: a token bucket holding up to BURST requests, refilled at RPM per minute — sustained
//             RPM, up to BURST at once after being idle;
//   hour:     a sliding log of admitted requests — never more than RPH in any 60 minutes;
//   tokens:   a token bucket holding TPM tokens, refilled at TPM per minute; a request takes its
//             estimated tokens, corrected by `adjust` once the real usage is known.
// This file holds the in-process store; plugins/rate/redis-store.ts runs the same rules in Redis.

export interface Limits {
  rpm: number;
  rph: number;
  burst: number;
  tpm: number;
}

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;

export interface Decision {
  admitted: boolean;
  /** The limit that refused (the one that frees last), when refused. */
  refusedBy?: 'requests' | 'hour' | 'tokens';
  /** ms until this request would be admitted (0 when admitted; Infinity if it never fits). */
  retryAfterMs: number;
  /** Requests that could be made right now, after this one. */
  remainingRequests: number;
  /** ms until remainingRequests is back to the limit (min of BURST and RPH). */
  resetRequestsMs: number;
  remainingTokens: number;
  resetTokensMs: number;
}

export interface RateStore {
  /** Admits and consumes, or refuses and consumes nothing — atomically. */
  consume(key: string, tokens: number, requestId: string): Promise<Decision>;
  /** Corrects the tokens taken by `delta` (positive: more were used than estimated). */
  adjust(key: string, delta: number): Promise<void>;
  close?(): void;
}

interface KeyState {
  requests: number;
  tokens: number;
  at: number;
  /** Times of admitted requests within the last hour, oldest first. */
  log: number[];
}

/** One process's limits: exact and atomic (the event loop runs one decision at a time). */
export class MemoryRateStore implements RateStore {
  private readonly keys = new Map<string, KeyState>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly limits: Limits,
    private readonly now: () => number = Date.now,
  ) {
    // Forget keys that have been idle long enough to be back at full allowance.
    this.sweeper = setInterval(() => this.sweep(), MINUTE_MS);
    this.sweeper.unref();
  }

  private state(key: string, now: number): KeyState {
    const { rpm, burst, tpm } = this.limits;
    let state = this.keys.get(key);
    if (!state) {
      state = { requests: burst, tokens: tpm, at: now, log: [] };
      this.keys.set(key, state);
    }
    const elapsed = Math.max(0, now - state.at);
    state.requests = Math.min(burst, state.requests + (elapsed * rpm) / MINUTE_MS);
    state.tokens = Math.min(tpm, state.tokens + (elapsed * tpm) / MINUTE_MS);
    state.at = now;
    const cutoff = now - HOUR_MS;
    let expired = 0;
    while (expired < state.log.length && state.log[expired]! <= cutoff) expired++;
    if (expired > 0) state.log.splice(0, expired);
    return state;
  }

  async consume(key: string, tokens: number): Promise<Decision> {
    const now = this.now();
    const { rpm, rph, tpm } = this.limits;
    const state = this.state(key, now);
    const waits = {
      requests: state.requests >= 1 ? 0 : ((1 - state.requests) * MINUTE_MS) / rpm,
      hour: state.log.length < rph ? 0 : state.log[state.log.length - rph]! + HOUR_MS - now,
      tokens: tokens <= state.tokens ? 0 : tokens > tpm ? Infinity : ((tokens - state.tokens) * MINUTE_MS) / tpm,
    };
    const [refusedBy, retryAfterMs] = (Object.entries(waits) as Array<[Decision['refusedBy'], number]>).reduce((a, b) => (b[1] > a[1] ? b : a));
    const admitted = retryAfterMs <= 0;
    if (admitted) {
      state.requests -= 1;
      state.tokens -= tokens;
      state.log.push(now);
    }
    return { admitted, refusedBy: admitted ? undefined : refusedBy, retryAfterMs: admitted ? 0 : Math.ceil(retryAfterMs), ...this.report(state, now) };
  }

  async adjust(key: string, delta: number): Promise<void> {
    const state = this.state(key, this.now());
    state.tokens = Math.min(this.limits.tpm, state.tokens - delta);
  }

  private report(state: KeyState, now: number): Omit<Decision, 'admitted' | 'refusedBy' | 'retryAfterMs'> {
    const { rpm, rph, burst, tpm } = this.limits;
    // Full again when the bucket is full and the hour log has room for a whole burst.
    const keep = rph - Math.min(burst, rph);
    const blocking = state.log.length > keep ? state.log[state.log.length - keep - 1]! + HOUR_MS - now : 0;
    return {
      remainingRequests: Math.max(0, Math.min(Math.floor(state.requests), rph - state.log.length)),
      resetRequestsMs: Math.ceil(Math.max(((burst - state.requests) * MINUTE_MS) / rpm, blocking)),
      remainingTokens: Math.max(0, Math.floor(state.tokens)),
      resetTokensMs: Math.ceil(((tpm - state.tokens) * MINUTE_MS) / tpm),
    };
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, state] of this.keys) {
      if (now - state.at > HOUR_MS && now - state.at > (this.limits.burst * MINUTE_MS) / this.limits.rpm) this.keys.delete(key);
    }
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}
