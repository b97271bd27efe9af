// The rate-limiter-flexible limiters behind the rate-limit plugin with MODELGATE_STORE=redis (the
// embedded store counts the same windows synchronously: memory-windows.ts). Every limiter
// counts per API key in fixed windows that start with a key's first request in them (the library's
// windows, not clock-aligned):
//   minute: RPM requests per 60 s;
//   burst:  BURST − RPM requests per 3600 s, used only once the minute's are spent (BurstyRateLimiter),
//           so an idle key may send BURST at once and then sustains RPM (none when BURST ≤ RPM);
//   hour:   RPH requests per 3600 s;
//   tokens: TPM tokens per 60 s.
import { BurstyRateLimiter, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';

export interface Limits {
  rpm: number;
  rph: number;
  burst: number;
  tpm: number;
}

const MINUTE_S = 60;
const HOUR_S = 3600;

export type LimiterName = 'minute' | 'burst' | 'hour' | 'tokens';

export interface Limiters {
  minute: RateLimiterAbstract;
  burst?: RateLimiterAbstract;
  /** minute, then burst once the minute's allowance is spent (a BurstyRateLimiter). */
  requests: Pick<RateLimiterAbstract, 'consume'>;
  hour: RateLimiterAbstract;
  tokens: RateLimiterAbstract;
}

/**
 * The options of a request's calls to its limiters. rate-limiter-flexible hands a call's options on
 * to the insurance limiter when the store fails, and ours marks them: so a request knows it was
 * answered locally.
 */
export class CallTrace {
  answeredLocally = false;
}

/** Makes one limiter named `name` (its key prefix) with `points` per `duration` seconds. */
export type MakeLimiter = (name: LimiterName, points: number, duration: number) => RateLimiterAbstract;

/** Requests a key may make at once from fresh windows: the minute's RPM plus the burst's. */
export function burstSize(limits: Limits): number {
  return Math.max(limits.rpm, limits.burst);
}

export function buildLimiters(limits: Limits, make: MakeLimiter): Limiters {
  const minute = make('minute', limits.rpm, MINUTE_S);
  const burst = limits.burst > limits.rpm ? make('burst', limits.burst - limits.rpm, HOUR_S) : undefined;
  return {
    minute,
    burst,
    requests: burst ? new BurstyRateLimiter(minute, burst) : minute,
    hour: make('hour', limits.rph, HOUR_S),
    tokens: make('tokens', limits.tpm, MINUTE_S),
  };
}

/**
 * Counters in Redis under REDIS_KEY_PREFIX + `rl:<name>:<key id>` (the connection adds the prefix);
 * the library's Lua script increments a counter and reads its TTL atomically, so replicas share one
 * count. `insure` gives each limiter the local limiter that answers when a Redis call fails.
 */
export function redisLimiters(limits: Limits, redis: Redis, insure?: MakeLimiter): Limiters {
  return buildLimiters(
    limits,
    (name, points, duration) =>
      new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: `rl:${name}`,
        points,
        duration,
        // A connection ioredis knows is down (refused, reconnecting) fails at once instead of
        // waiting for REDIS_COMMAND_TIMEOUT.
        rejectIfRedisNotReady: true,
        insuranceLimiter: insure?.(name, points, duration),
      }),
  );
}
