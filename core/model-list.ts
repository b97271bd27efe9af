// The models as clients see them, in OpenAI's model-object shape plus the gateway's own fields:
// `auto` first, then one entry per catalog model, named by its id, or `provider/id` when several
// providers serve that id. GET /v1/models lists them; GET /v1/models/{model} answers one.
import { kindOf, type Catalog, type CatalogModel } from './catalog.js';
import type { ModelAllowance } from './allowed-models.js';

const perMillion = (usdPerToken: number | null | undefined) => (usdPerToken == null ? null : Math.round(usdPerToken * 1e6 * 1e6) / 1e6);

export class ModelList {
  /** Each entry in list order; `auto` has no catalog model. */
  private readonly entries: Array<{ entry: Record<string, unknown>; model?: CatalogModel }>;
  private readonly byId = new Map<string, Record<string, unknown>>();
  private readonly byModel = new Map<CatalogModel, Record<string, unknown>>();

  /** `created` is when this gateway started: the catalog has no dates of its own. */
  constructor(
    private readonly catalog: Catalog,
    configured: (provider: string) => boolean,
    created: number,
  ) {
    const counts = new Map<string, number>();
    for (const model of catalog.models) counts.set(model.id, (counts.get(model.id) ?? 0) + 1);
    const auto = {
      id: 'auto',
      object: 'model',
      created,
      owned_by: 'modelgate',
      available: catalog.models.some((model) => configured(model.provider)),
      description: 'The gateway chooses the model by its routing strategy.',
    };
    this.entries = [{ entry: auto }];
    for (const model of catalog.models) {
      const entry = {
        id: counts.get(model.id)! > 1 ? `${model.provider}/${model.id}` : model.id,
        object: 'model',
        created,
        owned_by: model.provider,
        provider: model.provider,
        available: configured(model.provider),
        kind: kindOf(model),
        ...(model.dimensions !== undefined ? { dimensions: model.dimensions } : {}),
        aliases: model.aliases,
        pricing: {
          unit: 'USD per 1M tokens',
          input: perMillion(model.price.input),
          output: perMillion(model.price.output),
          cached_input: perMillion(model.price.cached_input),
          cache_write: perMillion(model.price.cache_write),
        },
        context_window: model.context_window,
        max_output_tokens: model.max_output_tokens,
        capabilities: model.capabilities,
        quality: model.quality,
      };
      this.entries.push({ entry, model });
      this.byModel.set(model, entry);
    }
    for (const { entry } of this.entries) this.byId.set(entry.id as string, entry);
  }

  /** Every entry, or with `allowed` (a restricted key's) only those it may use, and `auto` if any. */
  list(allowed?: ModelAllowance): Array<Record<string, unknown>> {
    if (!allowed) return this.entries.map(({ entry }) => entry);
    const usable = this.entries.filter(({ model }) => model && allowed(model)).map(({ entry }) => entry);
    return usable.length > 0 ? [this.entries[0]!.entry, ...usable] : [];
  }

  /**
   * The entry a name means: an id the list shows, or — since a chat request may name a model these
   * ways too — an alias or a `provider/id` pin that means exactly one catalog model (answered with
   * that model's entry, whose `id` is the one the list shows). An id several providers serve is
   * listed only as its `provider/id` entries, so alone it names no single model.
   */
  find(name: string, allowed?: ModelAllowance): Record<string, unknown> | undefined {
    const entry = this.lookup(name);
    if (!entry || !allowed || entry === this.entries[0]!.entry) return entry;
    const model = this.entries.find((candidate) => candidate.entry === entry)?.model;
    return model && allowed(model) ? entry : undefined;
  }

  private lookup(name: string): Record<string, unknown> | undefined {
    const listed = this.byId.get(name);
    if (listed) return listed;
    const found = this.catalog.find(name);
    if (found.length === 1) return this.byModel.get(found[0]!);
    const slash = name.indexOf('/');
    if (slash <= 0) return undefined;
    const pinned = this.catalog.get(name.slice(0, slash), name.slice(slash + 1));
    return pinned && this.byModel.get(pinned);
  }
}
