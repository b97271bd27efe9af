// What a Redis failure does to the rate limits (MODELGATE_RATE_LIMIT_REDIS_FAILURE). A failure is an
// error, no answer within REDIS_COMMAND_TIMEOUT, or a connection ioredis knows is down.
//   local:  each Redis limiter has rate-limiter-flexible's insurance limiter, an in-memory one with
//           the same limits, which answers the calls Redis failed: limits per replica meanwhile.
//   refuse: no insurance; the error comes through and the request gets 503.
// Either way Redis is not asked for a second after a failure (the insurance answers, or the request
// is refused, at once), so a hung Redis costs one command timeout per second, not one per call. An
// outage is logged once, and so is its end.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { GatewayError } from '../../core/errors.js';
import { CallTrace, redisLimiters, type LimiterName, type Limiters, type Limits } from './limiters.js';

const PAUSE_AFTER_FAILURE_MS = 1000;

type Options = { [key: string]: unknown };

/**
 * An insurance limiter: only rate-limiter-flexible calls it, when its Redis limiter's call failed
 * (or Redis is paused), so every call it answers is a fallback. It marks the request's CallTrace
 * and reports the failure.
 */
class Insurance extends RateLimiterMemory {
  constructor(
    options: ConstructorParameters<typeof RateLimiterMemory>[0],
    private readonly onUse: () => void,
  ) {
    super(options);
  }

  private used(options: Options | undefined): void {
    if (options instanceof CallTrace) options.answeredLocally = true;
    this.onUse();
  }

  override consume(key: string | number, points?: number, options?: Options) {
    this.used(options);
    return super.consume(key, points, options);
  }

  override penalty(key: string | number, points?: number, options?: Options) {
    this.used(options);
    return super.penalty(key, points, options);
  }

  override reward(key: string | number, points?: number, options?: Options) {
    this.used(options);
    return super.reward(key, points, options);
  }

  override get(key: string | number, options?: Options) {
    this.used(options);
    return super.get(key, options);
  }
}

/**
 * The connection as the limiters see it: while Redis is paused after a failure it reports a status
 * other than `ready`, so rate-limiter-flexible (rejectIfRedisNotReady) goes straight to the
 * insurance limiter — or fails, with `refuse` — without sending a command.
 */
function pausable(redis: Redis, paused: () => boolean): Redis {
  return new Proxy(redis, {
    get(target, property) {
      if (property === 'status' && paused()) return 'paused';
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

export class RedisRateLimits {
  private readonly connection: Redis;
  private pausedUntil = 0;
  private down = false;

  constructor(
    redis: Redis,
    private readonly mode: 'local' | 'refuse',
    private readonly logger: Logger,
  ) {
    this.connection = pausable(redis, () => Date.now() < this.pausedUntil);
  }

  /** Limiters with `limits`, on the shared connection (and, with `local`, their insurance). */
  limiters(limits: Limits): Limiters {
    const insure = (name: LimiterName, points: number, duration: number) => new Insurance({ keyPrefix: name, points, duration }, () => this.failed());
    return redisLimiters(limits, this.connection, this.mode === 'local' ? insure : undefined);
  }

  /** A Redis call failed; `error` when it came through (refuse mode). Returns the error to answer with. */
  failed(error?: Error): GatewayError {
    if (Date.now() >= this.pausedUntil) this.pausedUntil = Date.now() + PAUSE_AFTER_FAILURE_MS;
    if (!this.down) {
      this.logger.warn({ err: error?.message, mode: this.mode }, this.mode === 'local' ? 'rate limits: Redis failed, using local limits' : 'rate limits: Redis failed, refusing requests');
    }
    this.down = true;
    return new GatewayError('store_unavailable', { message: 'Rate limit store unavailable', headers: { 'retry-after': '1' } });
  }

  /** Redis answered every call of a request. */
  answered(): void {
    if (this.down) this.logger.info('rate limits: Redis answers again, shared limits restored');
    this.down = false;
  }
}
