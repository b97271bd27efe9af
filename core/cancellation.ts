// What the upstream call reads of an abort signal: whether and why it was aborted, and 'abort'
// listeners. A real AbortSignal is one; so is Canceller, the request's and each attempt's own,
// which costs a small object where an AbortController builds a DOM EventTarget (their creation and
// listeners were ~2% of a request's CPU, docs/benchmarks.md).

export interface Cancellation {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** Where an error thrown by a listener goes: as with an EventTarget, out of the abort, onto the next tick. */
const reportLater = (error: unknown) =>
  process.nextTick(() => {
    throw error;
  });

/**
 * A Cancellation that `abort` sets off, with an AbortSignal's semantics where its readers can tell:
 * a listener is added once however often it is added, runs at most once (at the abort), never when
 * added after the abort or removed before its turn (by an earlier listener, too); a second abort
 * does nothing; `abort` itself never throws (a listener's error is reported as EventTarget reports
 * it). Unlike AbortSignal, `abort` takes its reason always (there is no default AbortError).
 */
export class Canceller implements Cancellation {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | undefined;

  constructor(private readonly report: (error: unknown) => void = reportLater) {}

  /** Listeners run once whatever `options` say (the abort happens once). */
  addEventListener(_type: 'abort', listener: () => void, _options?: { once?: boolean }): void {
    if (this.aborted) return;
    const listeners = (this.listeners ??= []);
    if (!listeners.includes(listener)) listeners.push(listener);
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
    if (!listeners) return;
    // Runs over a copy; one removed meanwhile (from the live list) is skipped.
    for (const listener of [...listeners]) {
      if (!listeners.includes(listener)) continue;
      this.removeEventListener('abort', listener);
      try {
        listener();
      } catch (error) {
        this.report(error);
      }
    }
    this.listeners = undefined;
  }
}
