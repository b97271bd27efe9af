// What the upstream call reads of an abort signal: whether and why it was aborted, and one
// 'abort' listener at a time per reader. A real AbortSignal is one; so is Canceller, the attempt's
// own, which costs a small object where an AbortController builds a DOM EventTarget per attempt
// (its creation and listeners were ~2% of a request's CPU, docs/benchmarks.md).

export interface Cancellation {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * A Cancellation that `abort` sets off. As with an AbortSignal: each listener runs at most once (at
 * the abort), a listener added after the abort never runs, and a second abort does nothing.
 */
export class Canceller implements Cancellation {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | undefined;

  /** Listeners run once whatever `options` say (the abort happens once). */
  addEventListener(_type: 'abort', listener: () => void, _options?: { once?: boolean }): void {
    if (!this.aborted) (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const listeners = this.listeners;
    const at = listeners ? listeners.indexOf(listener) : -1;
    if (at >= 0) listeners!.splice(at, 1);
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (!listeners) return;
    // Every listener runs, even after one throws; the first error is rethrown once all have run.
    let failure: { error: unknown } | undefined;
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }
}
