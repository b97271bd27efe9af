// What a model name a client (or an experiment's arm) writes means: a catalog id or alias on any
// provider that serves it, or `provider/model` to pin one — a model the catalog lists there, or any
// name on a provider that takes unlisted models (a custom server). The router and the experiments
// both read names this way, so an arm routes exactly as a request naming its model would.
import { bareModel, type Catalog, type CatalogModel } from './catalog.js';
import type { Provider } from './provider.js';

/** The catalog entries `name` means; empty when it names none. */
export function modelsNamed(name: string, catalog: Catalog, providers: ReadonlyMap<string, Provider>): readonly CatalogModel[] {
  const found = catalog.find(name);
  if (found.length > 0) return found;
  const slash = name.indexOf('/');
  const provider = slash > 0 ? providers.get(name.slice(0, slash)) : undefined;
  if (!provider) return [];
  const model = name.slice(slash + 1);
  const pinned = catalog.get(provider.name, model);
  if (pinned) return [pinned];
  return provider.acceptsUnlistedModels && model !== '' ? [bareModel(provider.name, model)] : [];
}
