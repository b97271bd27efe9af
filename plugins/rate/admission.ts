// One request through a key's limiters — requests (minute, then burst), hour, tokens — asked at
// once; a refusal of requests is reported before one of tokens. rate-limiter-flexible counts a
// consume even when it refuses it, so a refusal gives back what every limiter took, the refusing
// one included: a refused request consumes nothing, and a client retrying while limited does not
// eat its own allowance. (Until the give-back
// lands, a simultaneous request of the same key may be refused that would otherwise have passed —
// never admitted that should not have been.)
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { burstSize, CallTrace, type Limiters, type Limits } from './limiters.js';

/** One limit as the x-ratelimit-* headers report it. */
export interface Reading {
  limit: number;
  remaining: number;
  resetMs: number;
}

/** Points a limiter counted for this request. */
export interface Taken {
  /** The tokens limiter (rate-limiter-flexible's, or the embedded store's windows): corrected through it. */
  limiter: Pick<RateLimiterAbstract, 'penalty' | 'reward'> | { penalty(key: string, points: number): void; reward(key: string, points: number): void };
  points: number;
  /** When the window they were counted in ends (Date.now() scale). */
  windowEndsAt: number;
}

export interface Admission {
  admitted: boolean;
  refusedBy?: 'requests' | 'tokens';
  /** Which limit refused, as the spec names it (the 429's `param`). */
  refusedLimit?: 'requests_per_minute' | 'requests_per_hour' | 'tokens_per_minute';
  /** The request's tokens exceed the whole TPM: waiting will not help. */
  never?: boolean;
  /** Until the refusing limit (and any other found full) has room for this request. */
  retryAfterMs: number;
  /** The tighter of the minute-with-burst and the hour limits (fewer remaining). */
  requests: Reading;
  tokens: Reading;
  /** What the tokens limiter took, to correct once the real usage is known. */
  tokensTaken?: Taken;
  /** A local limiter answered some call because Redis failed. */
  answeredLocally: boolean;
}

type Outcome = { ok: boolean; res: RateLimiterRes };

/** A consume's result, admitted or refused; a store error (not a RateLimiterRes) is thrown on. */
async function outcome(consuming: Promise<RateLimiterRes>): Promise<Outcome> {
  try {
    return { ok: true, res: await consuming };
  } catch (refusal) {
    if (refusal instanceof RateLimiterRes) return { ok: false, res: refusal };
    throw refusal;
  }
}

/** What is left of `limit` after `res` (null: the key has no window open) once `given` came back. */
function reading(limit: number, res: RateLimiterRes | null, given = 0): Reading {
  if (!res || res.msBeforeNext < 0) return { limit, remaining: limit, resetMs: 0 };
  return { limit, remaining: Math.max(0, limit - (res.consumedPoints - given)), resetMs: res.msBeforeNext };
}

/** What this request's consumes answered, per limit (none where it was not asked). */
interface Consumed {
  requests?: Outcome;
  hour?: Outcome;
  tokens?: Outcome;
}

/**
 * The limits as they stand after the decision: from the consumes, less what a refusal gave back
 * (`givenBack`: 1 request, or the request's tokens), and read from the limiters it did not reach.
 */
async function readings(limiters: Limiters, limits: Limits, key: string, trace: CallTrace, consumed: Consumed, givenBack: boolean, tokens: number) {
  const [minuteNow, burstNow, hourNow, tokensNow] = await Promise.all([
    consumed.requests?.res ?? limiters.minute.get(key, trace),
    limiters.burst?.get(key, trace) ?? null,
    consumed.hour?.res ?? limiters.hour.get(key, trace),
    consumed.tokens?.res ?? limiters.tokens.get(key, trace),
  ]);
  const back = (outcome: Outcome | undefined, points: number) => (outcome && givenBack ? points : 0);
  const minuteAlone = reading(limits.rpm, minuteNow, back(consumed.requests, 1));
  const burstAlone = limiters.burst ? reading(limiters.burst.points, burstNow).remaining : 0;
  return {
    // The minute with its burst: what a key may send right now, and when the minute's RPM come back.
    minute: { limit: burstSize(limits), remaining: minuteAlone.remaining + burstAlone, resetMs: minuteAlone.resetMs },
    hour: reading(limits.rph, hourNow, back(consumed.hour, 1)),
    tokens: reading(limits.tpm, tokensNow, back(consumed.tokens, tokens)),
  };
}

/** What a decision reads as, from the limits as they stand after it (both stores decide the same way). */
export function decided(d: {
  admitted: boolean;
  never: boolean;
  refusedBy: Admission['refusedBy'];
  refusedLimit: Admission['refusedLimit'];
  /** The request's tokens. */
  tokens: number;
  now: { minute: Reading; hour: Reading; tokens: Reading };
  tokensTaken: Taken | undefined;
  answeredLocally: boolean;
}): Admission {
  const { now } = d;
  let retryAfterMs = 0;
  if (!d.admitted && !d.never) {
    // Waiting for the refusing limit alone may not do: wait for every limit found without room.
    if (now.minute.remaining < 1) retryAfterMs = now.minute.resetMs;
    if (now.hour.remaining < 1) retryAfterMs = Math.max(retryAfterMs, now.hour.resetMs);
    if (now.tokens.remaining < d.tokens) retryAfterMs = Math.max(retryAfterMs, now.tokens.resetMs);
  }
  return {
    admitted: d.admitted,
    refusedBy: d.never ? 'tokens' : d.refusedBy,
    refusedLimit: d.refusedLimit,
    never: d.never,
    retryAfterMs,
    requests: now.hour.remaining < now.minute.remaining ? now.hour : now.minute,
    tokens: now.tokens,
    tokensTaken: d.admitted ? d.tokensTaken : undefined,
    answeredLocally: d.answeredLocally,
  };
}

export async function admit(limiters: Limiters, limits: Limits, key: string, tokens: number): Promise<Admission> {
  const trace = new CallTrace();
  const taken: Array<Taken & { limiter: RateLimiterAbstract }> = [];
  const take = (limiter: RateLimiterAbstract, points: number, res: RateLimiterRes): Taken => {
    const entry = { limiter, points, windowEndsAt: Date.now() + res.msBeforeNext };
    taken.push(entry);
    return entry;
  };
  const giveBack = () => Promise.all(taken.splice(0).map((entry) => entry.limiter.reward(key, entry.points, trace)));

  try {
    const consumed: Consumed = {};
    let tokensTaken: Taken | undefined;
    let refusedBy: Admission['refusedBy'];
    const never = tokens > limits.tpm;
    let refusedLimit: Admission['refusedLimit'] = never ? 'tokens_per_minute' : undefined;
    if (!never) {
      // The limits are asked at once (one round trip to Redis, not three in turn); any refusal
      // gives back what all of them took, so the order only decides which refusal is reported.
      const [requests, hour, tokenCount] = await Promise.allSettled([
        outcome(limiters.requests.consume(key, 1, trace)),
        outcome(limiters.hour.consume(key, 1, trace)),
        tokens > 0 ? outcome(limiters.tokens.consume(key, tokens, trace)) : undefined,
      ]);
      // What was taken is recorded before a store error is thrown on, so it can be given back.
      if (requests.status === 'fulfilled') {
        consumed.requests = requests.value;
        take(limiters.minute, 1, requests.value.res);
        // The bursty limiter asks the burst limiter only once the minute's allowance is spent.
        if (limiters.burst && requests.value.res.consumedPoints > limits.rpm) take(limiters.burst, 1, requests.value.res);
      }
      if (hour.status === 'fulfilled') take(limiters.hour, 1, (consumed.hour = hour.value).res);
      if (tokenCount.status === 'fulfilled' && tokenCount.value) tokensTaken = take(limiters.tokens, tokens, (consumed.tokens = tokenCount.value).res);
      for (const result of [requests, hour, tokenCount]) if (result.status === 'rejected') throw result.reason;
      if (!consumed.requests!.ok || !consumed.hour!.ok) {
        refusedBy = 'requests';
        refusedLimit = consumed.requests!.ok ? 'requests_per_hour' : 'requests_per_minute';
      } else if (consumed.tokens && !consumed.tokens.ok) {
        refusedBy = 'tokens';
        refusedLimit = 'tokens_per_minute';
      }
    }
    const admitted = !never && refusedBy === undefined;
    if (!admitted) await giveBack();

    const now = await readings(limiters, limits, key, trace, consumed, !admitted, tokens);
    return decided({ admitted, never, refusedBy, refusedLimit, tokens, now, tokensTaken, answeredLocally: trace.answeredLocally });
  } catch (error) {
    // The store failed (with MODELGATE_RATE_LIMIT_REDIS_FAILURE=refuse): the request will not go
    // on, so give back what it took if Redis lets us, without waiting for it.
    giveBack().catch(() => {});
    throw error;
  }
}

/**
 * Corrects the tokens a request took by what it really used: gives back the difference while the
 * window it was taken in lasts (once that window has ended, the estimate went with it), and takes
 * an overrun in the current window.
 */
export async function correctTokens(key: string, taken: Taken, used: number): Promise<void> {
  const delta = Math.ceil(used) - taken.points;
  if (delta > 0) await taken.limiter.penalty(key, delta);
  else if (delta < 0 && Date.now() < taken.windowEndsAt) await taken.limiter.reward(key, -delta);
}
