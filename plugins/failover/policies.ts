// The cockatiel policies around one target: retry (outer) → the provider's circuit breaker → the
// per-attempt timeout (inner). Which failures each one acts on:
// - retry: 5xx, 529, 429 without Retry-After, connection errors, garbage bodies, streams cut
//   before their first content. Never an error with Retry-After (the provider asked us to wait),
//   a timeout only on the last candidate (else it is better spent on another), never a 4xx
//   caused by the request.
// - breaker: every provider-side failure except 429 (rate limits are handled by Retry-After).
// Each provider has one breaker for the life of the process; its state is mirrored in the health
// registry (router, /v1/providers/status, metrics).
import {
  circuitBreaker,
  ConsecutiveBreaker,
  ConstantBackoff,
  ExponentialBackoff,
  handleWhen,
  noJitterGenerator,
  retry,
  timeout,
  TimeoutStrategy,
  TaskCancelledError,
  CircuitState,
  type CircuitBreakerPolicy,
  type RetryPolicy,
} from 'cockatiel';
import { isUpstreamError, timedOut } from '../../core/upstream-error.js';
import type { CircuitState as HealthCircuit, HealthRegistry } from '../../core/health.js';

export interface RetryConfig {
  attempts: number;
  delayMs: number;
  multiplier: number;
  exponential: boolean;
}

export interface BreakerConfig {
  enabled: boolean;
  threshold: number;
  recoveryMs: number;
}

const countsForBreaker = (error: Error) => isUpstreamError(error) && !error.causedByRequest && error.upstreamStatus !== 429;

/** One circuit breaker per provider, created on first use. */
export class Breakers {
  private readonly breakers = new Map<string, CircuitBreakerPolicy>();

  constructor(
    private readonly config: BreakerConfig,
    private readonly health: HealthRegistry,
  ) {}

  for(provider: string): CircuitBreakerPolicy | undefined {
    if (!this.config.enabled) {
      this.health.setCircuit(provider, 'disabled');
      return undefined;
    }
    let breaker = this.breakers.get(provider);
    if (!breaker) {
      breaker = circuitBreaker(handleWhen(countsForBreaker), {
        halfOpenAfter: this.config.recoveryMs,
        breaker: new ConsecutiveBreaker(this.config.threshold),
      });
      breaker.onStateChange((state) => this.health.setCircuit(provider, mirror(state), Date.now() + this.config.recoveryMs));
      this.breakers.set(provider, breaker);
    }
    return breaker;
  }

  /** A probe is in flight: other requests should go elsewhere rather than wait for it. */
  probing(provider: string): boolean {
    return this.breakers.get(provider)?.state === CircuitState.HalfOpen;
  }
}

function mirror(state: CircuitState): HealthCircuit {
  switch (state) {
    case CircuitState.Open:
    case CircuitState.Isolated:
      return 'open';
    case CircuitState.HalfOpen:
      return 'half_open';
    default:
      return 'closed';
  }
}

/** Retry policies by configuration: almost every request uses the default one. */
export class RetryPolicies {
  private readonly cache = new Map<string, RetryPolicy>();

  get(config: RetryConfig, lastCandidate: boolean): RetryPolicy {
    const key = `${config.attempts}/${config.delayMs}/${config.multiplier}/${config.exponential}/${lastCandidate}`;
    let policy = this.cache.get(key);
    if (!policy) {
      const backoff = config.exponential
        ? new ExponentialBackoff({ initialDelay: config.delayMs, exponent: config.multiplier, maxDelay: 30_000, generator: noJitterGenerator })
        : new ConstantBackoff(config.delayMs);
      // A Retry-After is never retried on the same provider (it asked us to wait); a timeout only
      // when no other candidate is left.
      const worthRetrying = (error: Error) =>
        isUpstreamError(error) && error.retryable && error.retryAfterMs === undefined && (lastCandidate || error.reason !== 'timeout');
      policy = retry(handleWhen(worthRetrying), { maxAttempts: config.attempts, backoff });
      if (this.cache.size > 100) this.cache.clear();
      this.cache.set(key, policy);
    }
    return policy;
  }
}

/** The per-attempt timeout; a timeout becomes a retryable UpstreamError (so breakers count it). */
export class AttemptTimeout {
  private readonly policy;

  constructor(private readonly ms: number) {
    // abortOnReturn off: aborting the inner signal after every successful attempt builds an
    // AbortError (a DOMException with a stack) per request; nothing listens to it by then anyway.
    this.policy = timeout(ms, { strategy: TimeoutStrategy.Aggressive, abortOnReturn: false });
  }

  async run<T>(provider: string, fn: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T> {
    try {
      return await this.policy.execute(({ signal: inner }) => fn(inner), signal);
    } catch (error) {
      if (error instanceof TaskCancelledError && !signal.aborted) {
        throw timedOut(provider, this.ms);
      }
      throw error;
    }
  }
}
