// Loads what a page shows when its inputs change, keeping the last answer, the error and whether a
// load is under way; `reload` reads it again (after a change). An answer that arrives after newer
// inputs were asked for is dropped.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

export function useLoad<T>(load: () => Promise<T>, inputs: readonly unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const latest = useRef(0);

  const run = useCallback(() => {
    const ticket = ++latest.current;
    setLoading(true);
    load().then(
      (answer) => {
        if (ticket !== latest.current) return;
        setData(answer);
        setError(null);
        setLoading(false);
      },
      (failure: unknown) => {
        if (ticket !== latest.current) return;
        setError(failure);
        setLoading(false);
      },
    );
  }, inputs);

  useEffect(run, [run]);
  return { data, error, loading, reload: run };
}
