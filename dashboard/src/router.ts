// Hash routes (#/keys): the gateway serves one index.html, and a reload or a shared link opens the same page.
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  /** The path after `#`, e.g. `/settings/keys`. */
  path: string;
  /** Its query (`#/usage?group_by=model`). */
  query: URLSearchParams;
}

function current(): Route {
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path, query = ''] = hash.split('?', 2) as [string, string?];
  return { path: path || '/', query: new URLSearchParams(query) };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    const changed = () => setRoute(current());
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

export function navigate(path: string, query?: Record<string, string>): void {
  const text = query ? new URLSearchParams(query).toString() : '';
  location.hash = text ? `${path}?${text}` : path;
}
