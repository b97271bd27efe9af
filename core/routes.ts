// Core endpoints: GET /v1/health (no key, never calls a provider) and GET /v1/models (the catalog
// in OpenAI's list format, with `auto`, prices, quality and availability).
import type { Catalog, CatalogModel } from './catalog.js';
import type { Route } from './pipeline.js';
import { sendJson } from './respond.js';
import type { Provider } from './provider.js';

export interface CoreRouteDeps {
  catalog: Catalog;
  providers: ReadonlyMap<string, Provider>;
  version: string;
  isShuttingDown(): boolean;
}

const perMillion = (usdPerToken: number | null | undefined) => (usdPerToken == null ? null : Math.round(usdPerToken * 1e6 * 1e6) / 1e6);

export function coreRoutes(deps: CoreRouteDeps): Route[] {
  const bootedAt = Date.now();
  const created = Math.floor(bootedAt / 1000);
  const available = (model: CatalogModel) => deps.providers.get(model.provider)?.configured === true;

  return [
    {
      method: 'GET',
      path: '/v1/health',
      public: true,
      open: true,
      async handle(ctx) {
        const configured = [...deps.providers.values()].filter((p) => p.configured).map((p) => p.name);
        const shuttingDown = deps.isShuttingDown();
        sendJson(ctx, shuttingDown ? 503 : 200, {
          status: shuttingDown ? 'shutting_down' : 'ok',
          version: deps.version,
          uptime_seconds: Math.floor((Date.now() - bootedAt) / 1000),
          providers: { configured },
        });
      },
    },
    {
      method: 'GET',
      path: '/v1/models',
      async handle(ctx) {
        const counts = new Map<string, number>();
        for (const model of deps.catalog.models) counts.set(model.id, (counts.get(model.id) ?? 0) + 1);
        const data = deps.catalog.models.map((model) => ({
          id: counts.get(model.id)! > 1 ? `${model.provider}/${model.id}` : model.id,
          object: 'model',
          created,
          owned_by: model.provider,
          provider: model.provider,
          available: available(model),
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
        }));
        sendJson(ctx, 200, {
          object: 'list',
          data: [
            {
              id: 'auto',
              object: 'model',
              created,
              owned_by: 'modelgate',
              available: deps.catalog.models.some(available),
              description: 'The gateway chooses the model by its routing strategy.',
            },
            ...data,
          ],
        });
      },
    },
  ];
}
