// The policies around one target: retry (outer) → the provider's circuit breaker (both cockatiel) →
// the per-attempt timeout (inner, AttemptTimeout below). Which failures each one acts on:
// - retry: 5xx, 529, 429 without Retry-After, connection errors, garbage bodies, streams cut
//   before their first content. Never an error with Retry-After (the provider asked us to wait),
//   a timeout only on the last candidate (else it is better spent on another), never a 4xx
//   caused by the request, never once the provider's circuit is open (the retry would wait out
//   its backoff only to be refused by the breaker).
// - breaker: every provider-side failure except 429 (rate limits are handled by Retry-After).
//   Only a success closes an open circuit: a probe that ends without a verdict leaves it open
//   (see Breakers.execute).
// - timeout: every attempt; its own small implementation (AttemptTimeout), not cockatiel's.
// Each provider has one breaker for the life of the process; its state is mirrored in the health
// registry (router, /v1/providers/status, metrics).
import {
  circuitBreaker,
  ConsecutiveBreaker,
  ConstantBackoff,
  DelegateBackoff,
  ExponentialBackoff,
  handleWhen,
  noJitterGenerator,
  retry,
  CircuitState,
  type CircuitBreakerPolicy,
  type FailureReason,
  type IHalfOpenAfterBackoffContext,
  type RetryPolicy,
} from 'cockatiel';
import { LRUCache } from 'lru-cache';
import { isUpstreamError, timedOut } from '../../core/upstream-error.js';
import { AbortedError } from '../../core/proxy.js';
import { Canceller, type Cancellation } from '../../core/cancellation.js';
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

const providerFailure = (error: Error) => isUpstreamError(error) && !error.causedByRequest && error.upstreamStatus !== 429;

/**
 * A half-open probe that ended without saying whether the provider works again: its client left,
 * it was cancelled, or the answer was neither a success nor a provider failure (a 429, a 4xx caused
 * by the request, a request the adapter cannot express). Wraps the original error on its way
 * through the breaker only; callers of Breakers.execute see the original.
 */
class InconclusiveProbe extends Error {
  override name = 'InconclusiveProbe';
  constructor(readonly original: unknown) {
    super('the circuit breaker probe ended without a verdict');
  }
}

const countsForBreaker = (error: Error) => error instanceof InconclusiveProbe || providerFailure(error);
const inconclusive = (reason: FailureReason<unknown> | undefined) => reason !== undefined && 'error' in reason && reason.error instanceof InconclusiveProbe;

/** One circuit breaker per provider, created on first use. */
export class Breakers {
  private readonly breakers = new Map<string, CircuitBreakerPolicy>();
  /** The errors whose call opened a circuit (cockatiel names the failure that broke it, synchronously, before rethrowing it). */
  private readonly openers = new WeakSet<object>();

  /** `providers`: the configured ones, shown as `disabled` from the start when breakers are off. */
  constructor(
    private readonly config: BreakerConfig,
    private readonly health: HealthRegistry,
    providers: Iterable<string>,
  ) {
    if (!config.enabled) for (const provider of providers) health.setCircuit(provider, 'disabled');
  }

  for(provider: string): CircuitBreakerPolicy | undefined {
    if (!this.config.enabled) return undefined;
    let breaker = this.breakers.get(provider);
    if (!breaker) {
      const { recoveryMs } = this.config;
      const created = circuitBreaker(handleWhen(countsForBreaker), {
        // An inconclusive probe reopens the circuit with its probe due at once: the recovery time
        // has passed already, only the verdict is missing, so the next request may probe again.
        halfOpenAfter: new DelegateBackoff<IHalfOpenAfterBackoffContext>((context) => (inconclusive(context.result) ? 0 : recoveryMs)),
        breaker: new ConsecutiveBreaker(this.config.threshold),
      });
      created.onBreak((reason) => {
        // An inconclusive probe reopens a circuit that was open already: not an opening.
        if ('error' in reason && reason.error instanceof Error && !(reason.error instanceof InconclusiveProbe)) this.openers.add(reason.error);
      });
      created.onStateChange((state) => {
        const wait = state === CircuitState.Open && !inconclusive(created.lastFailure) ? recoveryMs : 0;
        this.health.setCircuit(provider, mirror(state), Date.now() + wait);
      });
      this.breakers.set(provider, (breaker = created));
    }
    return breaker;
  }

  /**
   * Runs `fn` under the provider's breaker (or directly with breakers off). Two gaps of cockatiel
   * 3.2.1 are closed here:
   * - Its half-open state closes the circuit on any error its filter does not handle — a client
   *   that left, a cancellation, a 429 — although the provider proved nothing. Errors of the probe
   *   call that are not provider failures are rethrown into the breaker as InconclusiveProbe, which
   *   it handles as a failure: the circuit goes back to open (probe due at once, see `for`), and the
   *   caller gets the original error. Only a success closes the circuit.
   * - A call that arrives during a probe waits for it and then runs `fn` again without the abort
   *   signal. So `fn` gets our `signal`, never cockatiel's; a call whose client left meanwhile
   *   makes no upstream call; and the wait itself ends when the client leaves.
   */
  async execute<T>(provider: string, fn: (signal: Cancellation) => Promise<T>, signal: Cancellation, discard?: (value: T) => void): Promise<T> {
    const breaker = this.for(provider);
    if (!breaker) return fn(signal);
    if (signal.aborted) throw new AbortedError('client disconnected');
    const waits = breaker.state === CircuitState.HalfOpen;
    const run = breaker.execute(async () => {
      // fn runs in a non-closed state only as the probe (cockatiel calls it before it records half-open).
      const probe = breaker.state !== CircuitState.Closed;
      try {
        if (signal.aborted) throw new AbortedError('client disconnected');
        return await fn(signal);
      } catch (error) {
        throw probe && !providerFailure(error as Error) ? new InconclusiveProbe(error) : error;
      }
    }, forCockatiel(signal));
    try {
      return await (waits ? untilAborted(run, signal, discard) : run);
    } catch (error) {
      throw error instanceof InconclusiveProbe ? error.original : error;
    }
  }

  /** `error`, thrown by execute, is the failure that opened its provider's circuit (for the analytics' count of openings). */
  opened(error: unknown): boolean {
    return typeof error === 'object' && error !== null && this.openers.has(error);
  }

  /** A probe is in flight: other requests should go elsewhere rather than wait for it. */
  probing(provider: string): boolean {
    return this.breakers.get(provider)?.state === CircuitState.HalfOpen;
  }
}

/**
 * `promise`, or AbortedError as soon as `signal` aborts (a late value is handed to `discard`).
 * When `settlesItself` says so at the abort, `promise` is left to settle on its own instead (see
 * RetryPolicies.execute).
 */
function untilAborted<T>(promise: Promise<T>, signal: Cancellation, discard?: (value: T) => void, settlesItself?: () => boolean): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let gone = false;
    const onAbort = () => {
      if (settlesItself?.()) return;
      gone = true;
      reject(new AbortedError('client disconnected'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        if (gone) discard?.(value);
        else resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * The request's signal as cockatiel's policies take it. cockatiel 3 only reads `aborted` of the
 * signal it is given and hands it back to the function it runs (test/plugins/failover-signal.test.ts
 * holds it to that), so a Cancellation serves: no AbortSignal is built per request for it.
 */
function forCockatiel(signal: Cancellation): AbortSignal {
  return signal as AbortSignal;
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

/** Policies kept for reuse; a client's own delays (retry overrides) would otherwise add one each. */
export const MAX_RETRY_POLICIES = 64;

/** Retry policies by configuration: almost every request uses the default one. */
export class RetryPolicies {
  private readonly cache = new LRUCache<string, RetryPolicy>({ max: MAX_RETRY_POLICIES });
  /** The operator's configuration's two policies (not the last candidate, the last), looked up without a key. */
  private readonly defaults: [RetryPolicy | undefined, RetryPolicy | undefined] = [undefined, undefined];

  /** `operator`: the configuration of requests without a retry override, passed as this very object. */
  constructor(
    private readonly health: HealthRegistry,
    private readonly operator?: RetryConfig,
  ) {}

  /**
   * Runs `fn` under the policy for `config`. cockatiel 3.2.1's delay between attempts cannot be
   * aborted, so a client that leaves during a backoff settles the run at once (AbortedError); the
   * policy then stops at fn's own signal check, without another call. A client that leaves while
   * a call is in flight (`calling()`) is left to that call: the same signal aborts it and cockatiel
   * does not retry after an abort, so the run settles at once anyway — after the call's failure
   * was reported on the outcome, which the cost guard bills.
   */
  execute<T>(
    config: RetryConfig,
    lastCandidate: boolean,
    fn: (context: { attempt: number; signal: Cancellation }) => Promise<T>,
    signal: Cancellation,
    calling: () => boolean,
    discard?: (value: T) => void,
  ): Promise<T> {
    return untilAborted(this.get(config, lastCandidate).execute(fn as (context: { attempt: number; signal: AbortSignal }) => Promise<T>, forCockatiel(signal)), signal, discard, calling);
  }

  /** Policies held now: for the test of the bound. */
  get size(): number {
    return this.cache.size;
  }

  get(config: RetryConfig, lastCandidate: boolean): RetryPolicy {
    if (config === this.operator) return (this.defaults[lastCandidate ? 1 : 0] ??= this.make(config, lastCandidate));
    const key = `${config.attempts}/${config.delayMs}/${config.multiplier}/${config.exponential}/${lastCandidate}`;
    let policy = this.cache.get(key);
    if (!policy) this.cache.set(key, (policy = this.make(config, lastCandidate)));
    return policy;
  }

  private make(config: RetryConfig, lastCandidate: boolean): RetryPolicy {
    const backoff = config.exponential
      ? new ExponentialBackoff({ initialDelay: config.delayMs, exponent: config.multiplier, maxDelay: 30_000, generator: noJitterGenerator })
      : new ConstantBackoff(config.delayMs);
    // A Retry-After is never retried on the same provider (it asked us to wait); a timeout only
    // when no other candidate is left; nothing once the provider's circuit is open.
    const worthRetrying = (error: Error) =>
      isUpstreamError(error) &&
      error.retryable &&
      error.retryAfterMs === undefined &&
      (lastCandidate || error.reason !== 'timeout') &&
      !this.health.circuitOpen(error.provider);
    return retry(handleWhen(worthRetrying), { maxAttempts: config.attempts, backoff });
  }
}

/** Why an attempt's own signal aborted when its time ran out (core/attempt.ts reads the name). */
class AttemptTimedOut extends Error {
  override name = 'TimeoutError';
}

/**
 * The per-attempt timeout: a timeout becomes a retryable UpstreamError (so breakers count it), a
 * client that left an AbortedError. `fn` gets a signal of its own that aborts on either; once `fn`
 * settles it is left alone (a stream goes on under its own idle timeout). This is cockatiel's
 * aggressive timeout without its cost: its policy derives two abort controllers, an event emitter
 * and a race per call (~10 µs each request); here it is one Canceller, one timer, one listener.
 */
export class AttemptTimeout {
  constructor(private readonly ms: number) {}

  run<T>(provider: string, fn: (signal: Cancellation) => Promise<T>, signal: Cancellation): Promise<T> {
    if (signal.aborted) return Promise.reject(new AbortedError('client disconnected'));
    return new Promise<T>((resolve, reject) => {
      const inner = new Canceller();
      let settled = false;
      const end = () => {
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      };
      const onAbort = () => {
        if (settled) return;
        end();
        inner.abort(signal.reason);
        reject(new AbortedError('client disconnected'));
      };
      const timer = setTimeout(() => {
        if (settled) return;
        end();
        inner.abort(new AttemptTimedOut(`attempt timed out after ${this.ms} ms`));
        reject(timedOut(provider, this.ms));
      }, this.ms);
      signal.addEventListener('abort', onAbort);
      let running: Promise<T>;
      try {
        running = fn(inner);
      } catch (error) {
        end();
        return reject(error);
      }
      running.then(
        (value) => {
          if (settled) return; // too late: the caller has its timeout or abort already
          end();
          resolve(value);
        },
        (error: unknown) => {
          if (settled) return;
          end();
          reject(error);
        },
      );
    });
  }
}
