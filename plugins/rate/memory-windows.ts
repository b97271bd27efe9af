// The embedded store's rate limits, counted synchronously: per key and limit, a fixed window that
// starts with the key's first request in it — exactly the windows rate-limiter-flexible's memory
// limiter keeps (a count and when it ends; a refused request's points given back), without its
// promises, result objects and a timer per window. On the request path this is a few map lookups
// and additions instead of ~13 KB of allocation and four promise chains (issue 16). With
// MODELGATE_STORE=redis the limits stay rate-limiter-flexible's (plugins/rate/admission.ts).
import { decided, type Admission, type Reading } from './admission.js';
import { burstSize, type Limits } from './limiters.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/**
 * One key's window of one limit: points counted in it, and when it ends — on the monotonic clock
 * (performance.now()), so a wall clock stepped back (NTP, a VM resumed) does not stretch a window.
 */
interface Window {
  value: number;
  endsAt: number;
}

/** One limit's windows by key. Expired windows are swept when the map has doubled since the last sweep. */
export class Windows {
  private readonly entries = new Map<string, Window>();
  private sweepAt = 1024;

  constructor(
    readonly points: number,
    private readonly durationMs: number,
  ) {}

  /** Adds `points` to the key's open window, or opens one with them. */
  add(key: string, points: number, now: number): Window {
    const open = this.entries.get(key);
    if (open && open.endsAt > now) {
      open.value += points;
      return open;
    }
    const window = { value: points, endsAt: now + this.durationMs };
    this.entries.set(key, window);
    if (!open && this.entries.size >= this.sweepAt) this.sweep(now);
    return window;
  }

  /** The key's open window, if it has one. */
  read(key: string, now: number): Window | undefined {
    const open = this.entries.get(key);
    return open && open.endsAt > now ? open : undefined;
  }

  /** A correction once the real usage is known (correctTokens): more points, or some given back. */
  penalty(key: string, points: number): void {
    this.add(key, points, performance.now());
  }

  reward(key: string, points: number): void {
    this.add(key, -points, performance.now());
  }

  get size(): number {
    return this.entries.size;
  }

  private sweep(now: number): void {
    for (const [key, window] of this.entries) if (window.endsAt <= now) this.entries.delete(key);
    this.sweepAt = Math.max(1024, this.entries.size * 2);
  }
}

/** The four limits of one combination of limits (LimiterSets keeps one per combination). */
export interface MemoryLimits {
  minute: Windows;
  /** BURST − RPM an hour, used once the minute's are spent; none when BURST ≤ RPM. */
  burst?: Windows;
  hour: Windows;
  tokens: Windows;
}

export function memoryLimits(limits: Limits): MemoryLimits {
  return {
    minute: new Windows(limits.rpm, MINUTE_MS),
    burst: limits.burst > limits.rpm ? new Windows(limits.burst - limits.rpm, HOUR_MS) : undefined,
    hour: new Windows(limits.rph, HOUR_MS),
    tokens: new Windows(limits.tpm, MINUTE_MS),
  };
}

function reading(limit: number, window: Window | undefined, now: number): Reading {
  if (!window) return { limit, remaining: limit, resetMs: 0 };
  return { limit, remaining: Math.max(0, limit - window.value), resetMs: window.endsAt - now };
}

/**
 * admit() of plugins/rate/admission.ts for the embedded store, decided the same way: every limit
 * counts the request; any refusal gives back what all of them took; the headers read the limits as
 * they stand after the decision.
 */
export function admitInMemory(set: MemoryLimits, limits: Limits, key: string, tokens: number): Admission {
  const now = performance.now();
  const never = tokens > limits.tpm;
  let refusedBy: Admission['refusedBy'];
  let refusedLimit: Admission['refusedLimit'] = never ? 'tokens_per_minute' : undefined;
  let minute: Window | undefined;
  let burst: Window | undefined;
  let hour: Window | undefined;
  let counted: Window | undefined;
  if (!never) {
    minute = set.minute.add(key, 1, now);
    let requestsOk = minute.value <= limits.rpm;
    // The minute's allowance is spent: the burst allowance takes the request, if it has room.
    if (!requestsOk && set.burst) {
      burst = set.burst.add(key, 1, now);
      requestsOk = burst.value <= set.burst.points;
    }
    hour = set.hour.add(key, 1, now);
    if (tokens > 0) counted = set.tokens.add(key, tokens, now);
    if (!requestsOk || hour.value > limits.rph) {
      refusedBy = 'requests';
      refusedLimit = requestsOk ? 'requests_per_hour' : 'requests_per_minute';
    } else if (counted && counted.value > limits.tpm) {
      refusedBy = 'tokens';
      refusedLimit = 'tokens_per_minute';
    }
  }
  const admitted = !never && refusedBy === undefined;
  if (!admitted && !never) {
    minute!.value -= 1;
    if (burst) burst.value -= 1;
    hour!.value -= 1;
    if (counted) counted.value -= tokens;
  }

  const minuteAlone = reading(limits.rpm, minute ?? set.minute.read(key, now), now);
  // A request the burst took reports the earlier of the two windows' ends, as rate-limiter-flexible's bursty limiter does.
  if (burst) minuteAlone.resetMs = Math.min(minuteAlone.resetMs, burst.endsAt - now);
  const burstAlone = set.burst ? reading(set.burst.points, set.burst.read(key, now), now).remaining : 0;
  const minuteReading: Reading = { limit: burstSize(limits), remaining: minuteAlone.remaining + burstAlone, resetMs: minuteAlone.resetMs };
  const hourReading = reading(limits.rph, hour ?? set.hour.read(key, now), now);
  const tokensReading = reading(limits.tpm, counted ?? set.tokens.read(key, now), now);
  // correctTokens reads the window's end on Date.now()'s scale.
  const tokensTaken = counted ? { limiter: set.tokens, points: tokens, windowEndsAt: Date.now() + (counted.endsAt - now) } : undefined;
  const readings = { minute: minuteReading, hour: hourReading, tokens: tokensReading };
  return decided({ admitted, never, refusedBy, refusedLimit, tokens, now: readings, tokensTaken, answeredLocally: false });
}
