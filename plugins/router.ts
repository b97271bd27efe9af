// Router: decides where a chat request may go and in which order (ctx.candidates, the failover
// chain). Refuses unknown models (404 Model not found) and models no configured provider serves
// (404 Model unavailable). `auto` ranks the catalog by MODELGATE_ROUTING_STRATEGY; a named model
// ranks the providers that serve it; `provider/model` pins one. Reads the MODELGATE_ROUTING_* settings.
import { defineSettings, type SettingsOf } from '../core/settings.js';
import { GatewayError } from '../core/errors.js';
import { bareModel, costOf, isPriced, type Catalog, type CatalogModel } from '../core/catalog.js';
import type { RequestContext, Target } from '../core/context.js';
import type { PluginModule } from '../core/pipeline.js';
import type { Provider } from '../providers/types.js';

const settings = defineSettings({
  MODELGATE_ROUTING_STRATEGY: {
    type: 'string',
    enum: ['cost_optimized', 'quality_optimized', 'performance_optimized'],
    default: 'cost_optimized',
    description: 'How candidates are ranked: cheapest estimate, highest quality, or lowest observed latency.',
  },
  MODELGATE_MAX_COST_PER_REQUEST: {
    type: 'number',
    default: 0.01,
    minimum: 0,
    variants: ['dev', 'staging', 'prod'],
    envDefaults: { dev: '0.001', staging: '0.005', prod: '0.05' },
    description: 'USD: candidates whose estimated cost exceeds this are not chosen; a request whose every candidate exceeds it is refused.',
  },
  MODELGATE_QUALITY_THRESHOLD: {
    type: 'number',
    default: 0.8,
    minimum: 0,
    maximum: 1,
    description: 'Lowest catalog quality score (0..1) `auto` may choose.',
  },
  MODELGATE_RESPONSE_TIME_LIMIT: {
    type: 'integer',
    default: 5000,
    minimum: 1,
    description: 'ms: quality_optimized prefers models whose observed latency is within this.',
  },
  MODELGATE_COST_OPTIMIZATION: {
    type: 'boolean',
    default: true,
    description: 'Break ties between equally ranked candidates by estimated cost.',
  },
});

export type RouterSettings = SettingsOf<typeof settings>;

export interface RouterDeps {
  catalog: Catalog;
  providers: ReadonlyMap<string, Provider>;
}

/** Estimated USD of the request on `model`: counted prompt tokens plus the expected output. */
export function estimateCost(ctx: RequestContext, model: CatalogModel): number | undefined {
  const chat = ctx.chat!;
  const output = Math.min(chat.expectedOutputTokens, model.max_output_tokens ?? Infinity);
  return costOf(model, { prompt_tokens: chat.promptTokens, completion_tokens: output, total_tokens: chat.promptTokens + output });
}

export const router: PluginModule<typeof settings, RouterDeps> = {
  name: 'router',
  settings,
  create(values, { catalog, providers }) {
    const s = values as RouterSettings;
    const target = (model: CatalogModel): Target | undefined => {
      const provider = providers.get(model.provider);
      return provider?.configured ? { provider, model } : undefined;
    };

    /** The catalog entries a model name means: an id or alias, or `provider/model` to pin. */
    function resolve(name: string): CatalogModel[] {
      const found = catalog.find(name);
      if (found.length > 0) return [...found];
      const slash = name.indexOf('/');
      if (slash > 0 && providers.has(name.slice(0, slash))) {
        const provider = name.slice(0, slash);
        const model = name.slice(slash + 1);
        const pinned = catalog.get(provider, model);
        if (pinned) return [pinned];
        if (providers.get(provider)!.acceptsUnlistedModels && model !== '') return [bareModel(provider, model)];
      }
      throw new GatewayError('model_not_found', { param: 'model', message: 'Model not found' });
    }

    function auto(ctx: RequestContext): Target[] {
      const ranked: Array<{ target: Target; cost: number }> = [];
      for (const model of catalog.models) {
        const t = target(model);
        if (!t || !isPriced(model) || model.quality.score < s.MODELGATE_QUALITY_THRESHOLD) continue;
        const cost = estimateCost(ctx, model)!;
        if (cost > s.MODELGATE_MAX_COST_PER_REQUEST) continue;
        ranked.push({ target: t, cost });
      }
      if (ranked.length === 0) throw new GatewayError('model_unavailable', { param: 'model', message: 'Model unavailable' });
      ranked.sort((a, b) => a.cost - b.cost);
      return ranked.map((entry) => entry.target);
    }

    return {
      name: 'router',
      step: {
        name: 'router',
        scope: 'chat',
        handle(ctx, next) {
          const name = ctx.chat!.body.model;
          ctx.strategy = s.MODELGATE_ROUTING_STRATEGY;
          if (name === 'auto') {
            ctx.candidates = auto(ctx);
          } else {
            const targets = resolve(name).map(target).filter((t): t is Target => t !== undefined);
            if (targets.length === 0) throw new GatewayError('model_unavailable', { param: 'model', message: 'Model unavailable' });
            ctx.candidates = targets;
          }
          return next();
        },
      },
    };
  },
};
