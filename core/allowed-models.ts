// A key's allowed models (Principal.allowedModels): entries `model` (an id or alias, on any
// provider), `provider/model`, or `provider/*`. The router keeps a restricted key's candidates
// within them (auto and failover too); GET /v1/models lists only them.
import type { CatalogModel } from './catalog.js';

export type ModelAllowance = (model: Pick<CatalogModel, 'provider' | 'id' | 'aliases'>) => boolean;

/** A test of catalog entries against `entries`; undefined (no restriction) allows everything. */
export function modelAllowance(entries: readonly string[] | undefined): ModelAllowance {
  if (!entries) return () => true;
  const anywhere = new Set<string>();
  const providers = new Set<string>();
  const pinned = new Set<string>();
  for (const entry of entries) {
    const slash = entry.indexOf('/');
    if (slash < 0) anywhere.add(entry);
    else if (entry.slice(slash + 1) === '*') providers.add(entry.slice(0, slash));
    else pinned.add(entry);
  }
  return (model) => {
    if (providers.has(model.provider)) return true;
    for (const name of [model.id, ...model.aliases]) if (anywhere.has(name) || pinned.has(`${model.provider}/${name}`)) return true;
    return false;
  };
}
