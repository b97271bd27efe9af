// Reading one API answer for a component: loading, the answer or the error, and a way to read it again.
// An answer that arrives after a newer request started is dropped, so fast typing never shows stale rows.
import { useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

export function useLoaded<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const [round, setRound] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const mine = ++latest.current;
    setLoading(true);
    load().then(
      (answer) => {
        if (mine !== latest.current) return;
        setData(answer);
        setError(null);
        setLoading(false);
      },
      (caught: unknown) => {
        if (mine !== latest.current) return;
        setError(caught);
        setLoading(false);
      },
    );
    // `load` is a new closure each render: the caller names what it depends on in `deps`.
  }, [...deps, round]);
  return { data, error, loading, reload: () => setRound((n) => n + 1) };
}

/** The value once it has stopped changing for `ms` (search boxes: one request per pause in typing). */
export function useDebounced<T>(value: T, ms = 300): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}
