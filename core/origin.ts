// Whether a browser request comes from the gateway's own pages: what the dashboard's sign-in asks
// before it sets a cookie. Browsers say where a request comes from in Sec-Fetch-Site (and Origin);
// a request that says neither is not a browser's cross-site one (a cross-site POST always has Origin).
import type { RequestContext } from './context.js';

export function sameOrigin(ctx: RequestContext): boolean {
  const site = ctx.headers['sec-fetch-site'];
  if (typeof site === 'string') return site === 'same-origin' || site === 'none';
  const origin = ctx.headers.origin;
  if (origin === undefined) return true;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false;
  }
  const forwarded = ctx.headers['x-forwarded-host'];
  const hosts = [ctx.headers.host, ...(typeof forwarded === 'string' ? forwarded.split(',').map((value) => value.trim()) : [])];
  return hosts.some((candidate) => candidate !== undefined && candidate.toLowerCase() === host.toLowerCase());
}
