// What a failed upstream call costs. The failover step reports every call that ended without an
// answer on `outcome.failedAttempts`; the cost guard settles each target's reservation from it:
// - a call the gateway cut off while the provider was working on it — it timed out, or the client
//   left while it was in flight — is billed at the request's estimate on that target: the provider
//   had the whole request and usually generates (and bills) the answer nobody reads; the estimate is
//   the most it can bill (max_tokens, else the default output);
// - any other failure is free: the provider refused it (an HTTP error status: 429, 5xx, …), could
//   not be reached, or broke its answer before the first content.
import type { FailedAttempt, Target } from '../../core/context.js';

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
