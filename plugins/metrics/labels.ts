// Label values, kept bounded so a client cannot grow the number of series: routes are the gateway's
// own route templates (`unmatched` for anything else), models are catalog ids (`other` for names
// the catalog does not know, `none` before a body was read), never key secrets, paths or free text (key ids only in the bounded per-key families: key-labels.ts).
import type { Catalog } from '../../core/catalog.js';
import type { RequestContext } from '../../core/context.js';
import type { ErrorKindName } from '../../core/errors.js';

export const NONE = 'none';
export const OTHER = 'other';
export const UNMATCHED = 'unmatched';

export function routeLabel(ctx: RequestContext): string {
  return ctx.route || UNMATCHED;
}

export function providerLabel(ctx: RequestContext): string {
  return ctx.outcome.target?.provider.name ?? NONE;
}

/** The catalog model that answered; before routing, the catalog model the client named. */
export function modelLabel(ctx: RequestContext, catalog: Catalog): string {
  const target = ctx.outcome.target;
  if (target) return catalog.get(target.provider.name, target.model.id) ? target.model.id : OTHER;
  const name = ctx.chat?.body.model;
  if (name === undefined) return NONE;
  if (name === 'auto') return name;
  const known = catalog.find(name)[0];
  if (known) return known.id;
  const slash = name.indexOf('/');
  return (slash > 0 && catalog.get(name.slice(0, slash), name.slice(slash + 1))?.id) || OTHER;
}

const CACHE_LABELS = { HIT: 'hit', MISS: 'miss', BYPASS: 'bypass' } as const;

export function cacheLabel(ctx: RequestContext): string {
  return ctx.outcome.cache ? CACHE_LABELS[ctx.outcome.cache] : NONE;
}

export const REFUSAL_REASONS = ['auth', 'ip_filter', 'rate_limit', 'cost_guard'] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** Which gateway guard refused the request; an upstream's own 429 is not a refusal of ours. */
export const REFUSAL_BY_KIND: Partial<Record<ErrorKindName, RefusalReason>> = {
  invalid_api_key: 'auth',
  api_key_expired: 'auth',
  ip_forbidden: 'ip_filter',
  rate_limit_exceeded: 'rate_limit',
  cost_limit_exceeded: 'cost_guard',
};

export const ALERT_ACTIONS = new Set(['email', 'chat', 'webhook', 'pause']);
export const STORE_COMPONENTS = new Set(['rate-limit', 'cost-guard']);

/** Label children by their values, made once: cheaper per request than prom-client's labels(). */
export class Children<T> {
  private readonly made = new Map<string, T>();
  constructor(private readonly make: (values: string[]) => T) {}

  get(...values: string[]): T {
    const key = values.join('\u0001');
    let child = this.made.get(key);
    if (child === undefined) this.made.set(key, (child = this.make(values)));
    return child;
  }
}
