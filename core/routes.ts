// Core endpoints: GET /v1/health (no key, never refuses, never calls a provider; its details only for
// a client the keyed routes would admit), GET /v1/models (the catalog in OpenAI's list format, with
// `auto`, prices, quality and availability) and GET /v1/models/{model} (one entry of that list, as
// OpenAI's "retrieve model" answers).
import type { Catalog } from './catalog.js';
import type { RequestContext } from './context.js';
import { GatewayError } from './errors.js';
import { ModelList } from './model-list.js';
import { modelAllowance } from './allowed-models.js';
import type { Route } from './pipeline.js';
import { sendJson } from './respond.js';
import type { Provider } from './provider.js';

export interface CoreRouteDeps {
  catalog: Catalog;
  providers: ReadonlyMap<string, Provider>;
  version: string;
  isShuttingDown(): boolean;
  /** Whether the keyed routes would let this client in (its address and key); never throws. */
  admits(ctx: RequestContext): Promise<boolean>;
}

// The answer depends on the caller's key: no shared cache may keep one caller's details for another.
const UNCACHED = { 'cache-control': 'no-store' };

export function coreRoutes(deps: CoreRouteDeps): Route[] {
  const bootedAt = Date.now();
  const models = new ModelList(deps.catalog, (name) => deps.providers.get(name)?.configured === true, Math.floor(bootedAt / 1000));

  return [
    {
      method: 'GET',
      path: '/v1/health',
      public: true,
      open: true,
      async handle(ctx) {
        const shuttingDown = deps.isShuttingDown();
        const code = shuttingDown ? 503 : 200;
        const status = shuttingDown ? 'shutting_down' : 'ok';
        // Load balancers probe without a key and judge by the status code. What runs here (version)
        // and what it talks to (providers) helps an attacker more than a load balancer.
        if (!(await deps.admits(ctx))) return sendJson(ctx, code, { status }, UNCACHED);
        const configured = [...deps.providers.values()].filter((p) => p.configured).map((p) => p.name);
        sendJson(
          ctx,
          code,
          { status, version: deps.version, uptime_seconds: Math.floor((Date.now() - bootedAt) / 1000), providers: { configured } },
          UNCACHED,
        );
      },
    },
    {
      method: 'GET',
      path: '/v1/models',
      async handle(ctx) {
        // A key restricted to some models sees only those.
        const allowed = ctx.principal?.allowedModels ? modelAllowance(ctx.principal.allowedModels) : undefined;
        sendJson(ctx, 200, { object: 'list', data: models.list(allowed) });
      },
    },
    {
      method: 'GET',
      // `+`: an id may hold a slash (`openai/gpt-4o`), sent raw or as %2F (the OpenAI SDK's way).
      path: '/v1/models/{model+}',
      async handle(ctx) {
        const model = models.find(ctx.params.model!, ctx.principal?.allowedModels ? modelAllowance(ctx.principal.allowedModels) : undefined);
        // OpenAI answers an unknown id with 404 model_not_found, param "model".
        if (!model) throw new GatewayError('model_not_found', { param: 'model' });
        sendJson(ctx, 200, model);
      },
    },
  ];
}
