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

/**
 * Label children by their values (one to five, `arity` of them), made once. A lookup walks nested
 * maps, one level a value: no key string joined, no array — nothing allocated once a child exists.
 */
export class Children<T> {
  private readonly root = new Map<string, unknown>();
  constructor(
    private readonly arity: 1 | 2 | 3 | 4 | 5,
    private readonly make: (values: string[]) => T,
  ) {}

  get(v0: string, v1 = '', v2 = '', v3 = '', v4 = ''): T {
    const n = this.arity;
    let node = this.root;
    if (n > 1) node = branch(node, v0);
    if (n > 2) node = branch(node, v1);
    if (n > 3) node = branch(node, v2);
    if (n > 4) node = branch(node, v3);
    const last = n === 1 ? v0 : n === 2 ? v1 : n === 3 ? v2 : n === 4 ? v3 : v4;
    let child = node.get(last) as T | undefined;
    if (child === undefined) node.set(last, (child = this.make([v0, v1, v2, v3, v4].slice(0, n))));
    return child;
  }
}

function branch(node: Map<string, unknown>, value: string): Map<string, unknown> {
  let next = node.get(value) as Map<string, unknown> | undefined;
  if (next === undefined) node.set(value, (next = new Map()));
  return next;
}
