// Node's MaxListenersExceededWarning is the trace of a listener added per request, per write or per
// connection and never removed: harmless in one test, a leak in a process that serves for days.
// A test watches for it while it drives a fake or the gateway, and asserts none was emitted.

/** Starts collecting MaxListenersExceededWarnings; the returned function stops and returns their messages. */
export function watchListenerLeaks(): () => Promise<string[]> {
  const leaks: string[] = [];
  const onWarning = (warning: Error) => {
    if (warning.name === 'MaxListenersExceededWarning') leaks.push(warning.message);
  };
  process.on('warning', onWarning);
  return async () => {
    // process.emitWarning emits on the next tick: let one pass before looking.
    await new Promise((resolve) => setImmediate(resolve));
    process.off('warning', onWarning);
    return leaks;
  };
}
