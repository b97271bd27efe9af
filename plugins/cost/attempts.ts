// What a failed upstream call costs. The failover step reports every call that ended without an
// answer on `outcome.failedAttempts`; the cost guard settles each target's reservation from it:
// - a call the gateway cut off while the provider was working on it — it timed out, or the client
//   left while it was in flight — is billed at the request's estimate on that target: the provider
//   had the whole request and usually generates (and bills) the answer nobody reads; the estimate is
//   the most it can bill (max_tokens, else the default output);
// - any other failure is free: the provider refused it (an HTTP error status: 429, 5xx, …), could
//   not be reached, or broke its answer before the first content.
//
// `failedAttempts` belongs on core/context.ts's Outcome; it is declared here, by module
// augmentation, until the failover step fills it (see FailedAttempt).
import type { FailureReason } from '../../core/upstream-error.js';
import type { Target } from '../../core/context.js';

/** One upstream call (a retry is a call of its own) that ended without an answer. */
export interface FailedAttempt {
  target: Target;
  /** The UpstreamError's reason, or `client_abort`: the client left while this call was in flight. */
  reason: FailureReason | 'client_abort';
  /** The provider's HTTP status; 0 when none arrived. */
  upstreamStatus: number;
}

declare module '../../core/context.js' {
  interface Outcome {
    /**
     * Filled by the failover step, in order: every upstream call that ended without an answer,
     * pushed before the next call or the next target's beforeAttempt hooks run. Absent: no call
     * failed (or the failover step does not report them).
     */
    failedAttempts?: FailedAttempt[];
  }
}

/** Whether the provider probably generated (and bills) what a failed call asked for. */
export function billedAtEstimate(failure: FailedAttempt): boolean {
  return failure.reason === 'timeout' || failure.reason === 'client_abort';
}

/** Calls to `target` that failed after the `from`-th report and are billed at the estimate. */
export function callsBilledAtEstimate(failures: readonly FailedAttempt[] | undefined, from: number, target: Target): number {
  return (failures ?? []).slice(from).filter((failure) => sameTarget(failure.target, target) && billedAtEstimate(failure)).length;
}

function sameTarget(a: Target, b: Target): boolean {
  return a.provider.name === b.provider.name && a.model.id === b.model.id;
}
