// Router: decides where a chat request may go and in which order (ctx.candidates, the failover
// chain). Refuses unknown models (404 Model not found), models no configured provider serves (404
// Model unavailable), and requests nothing fits (see router/no-fit.ts). `auto` ranks the catalog,
// a named model the providers serving it, `provider/model` pins; the client's fallback_models and
// fallback_providers extend the chain, marked as the client's (router/chain.ts). Reads the MODELGATE_ROUTING_* settings, MAX_COST_PER_REQUEST,
// QUALITY_THRESHOLD, RESPONSE_TIME_LIMIT, COST_OPTIMIZATION and PROVIDER_WEIGHTS.
import { defineSettings, type SettingsOf } from '../core/settings.js';
import { ConfigError } from '../core/config.js';
import { GatewayError } from '../core/errors.js';
import type { CatalogModel } from '../core/catalog.js';
import { modelsNamed } from '../core/model-names.js';
import { perRequestCap } from '../core/estimate.js';
import { modelAllowance } from '../core/allowed-models.js';
import type { RequestContext } from '../core/context.js';
import type { PluginModule } from '../core/pipeline.js';
import type { OverrideSpec } from '../core/overrides.js';
import type { Provider } from '../core/provider.js';
import { CandidateFilter, type Candidate, type Rules } from './router/candidates.js';
import { rank, type Strategy } from './router/rank.js';
import { noCandidate } from './router/no-fit.js';
import { candidateChain } from './router/chain.js';

const STRATEGIES = ['cost_optimized', 'quality_optimized', 'performance_optimized'] as const;

const settings = defineSettings({
  MODELGATE_ROUTING_STRATEGY: {
    type: 'string',
    enum: STRATEGIES,
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
    description: 'Lowest catalog quality score (0..1) `auto` and fallback providers may choose. A model the client names is not held to it.',
  },
  MODELGATE_RESPONSE_TIME_LIMIT: {
    type: 'integer',
    default: 5000,
    minimum: 1,
    description: 'ms: quality_optimized ranks models whose observed latency exceeds this after all others.',
  },
  MODELGATE_COST_OPTIMIZATION: {
    type: 'boolean',
    default: true,
    description: 'Among equally good candidates of the quality and performance strategies, prefer the cheaper.',
  },
  MODELGATE_PROVIDER_WEIGHTS: {
    type: 'array',
    default: [],
    items: { type: 'string', pattern: '^[a-z]+:\\d+(\\.\\d+)?$' },
    check: (entries: readonly string[], known) =>
      entries.map((entry) => entry.split(':')[0]!).filter((name) => !known.providers.includes(name)).map((name) => `unknown provider "${name}" (known: ${known.providers.join(', ')})`),
    description: 'Load split among equally good candidates, e.g. `openai:3,anthropic:1` (unlisted providers weigh 1).',
  },
  MODELGATE_ROUTING_EXPLORATION: {
    type: 'number',
    default: 0.05,
    minimum: 0,
    maximum: 1,
    description: 'Share of performance_optimized requests sent to the least-measured other candidate, so latency rankings follow change.',
  },
});

export type RouterSettings = SettingsOf<typeof settings>;

const overrides: OverrideSpec[] = [{
  name: 'routing',
  fields: {
    strategy: { type: 'string', enum: STRATEGIES, description: 'Ranking strategy for this request.' },
    max_cost_per_request: { type: 'number', minimum: 0, description: 'USD cap on the estimated cost; may lower the operator cap, never raise it.' },
    quality_threshold: { type: 'number', minimum: 0, maximum: 1, description: 'Lowest quality auto may choose.' },
    response_time_limit: { type: 'integer', minimum: 1, description: 'ms, for quality_optimized.' },
  },
  headers: {
    'x-modelgate-strategy': 'strategy',
    'x-modelgate-max-cost': 'max_cost_per_request',
    'x-modelgate-quality-threshold': 'quality_threshold',
    'x-modelgate-response-time-limit': 'response_time_limit',
  },
}];

interface RoutingOverride {
  strategy?: Strategy;
  max_cost_per_request?: number;
  quality_threshold?: number;
  response_time_limit?: number;
}

interface FallbackOverride {
  fallback_models?: string[];
  fallback_providers?: string[];
}

export const router: PluginModule<typeof settings> = {
  name: 'router',
  settings,
  overrides,
  create(values, { catalog, providers, health }) {
    const s = values as RouterSettings;
    const weights = parseWeights(s.MODELGATE_PROVIDER_WEIGHTS, providers);

    function route(ctx: RequestContext): void {
      const chat = ctx.chat!;
      const routing = (chat.overrides.routing ?? {}) as RoutingOverride;
      const fallback = (chat.overrides.failover ?? {}) as FallbackOverride;
      const strategy = routing.strategy ?? s.MODELGATE_ROUTING_STRATEGY;
      const limits = { qualityThreshold: routing.quality_threshold ?? s.MODELGATE_QUALITY_THRESHOLD, maxCost: perRequestCap(chat, ctx.principal?.limits?.max_cost_per_request ?? s.MODELGATE_MAX_COST_PER_REQUEST) };
      const filter = new CandidateFilter(ctx, providers, health, limits);
      const order = (candidates: Candidate[]) =>
        rank(candidates, {
          strategy,
          stream: chat.stream,
          responseTimeLimit: routing.response_time_limit ?? s.MODELGATE_RESPONSE_TIME_LIMIT,
          costTieBreak: s.MODELGATE_COST_OPTIMIZATION,
          weights,
          exploration: s.MODELGATE_ROUTING_EXPLORATION,
          health,
        });
      // A key restricted to some models: nothing outside them is ever a candidate (auto, fallbacks, failover).
      const allowed = modelAllowance(ctx.principal?.allowedModels);
      const keep = (models: readonly CatalogModel[], rules: Rules) =>
        models.filter(allowed).map((model) => filter.check(model, rules)).filter((c): c is Candidate => c !== undefined);
      // auto and each fallback provider's best fit (the gateway's choice): every constraint, priced
      // models only. A model the client named — requested, in fallback_models, or the requested
      // model on a fallback provider — may be below the quality threshold or unpriced (the cost
      // guard decides on unpriced models, and on the requested one's cost); the cap applies to a
      // priced fallback's estimate here.
      const AUTO: Rules = { quality: true, cost: true, unpriced: false };
      const NAMED: Rules = { quality: false, cost: false, unpriced: true };
      const FALLBACK: Rules = { quality: false, cost: true, unpriced: true };

      const requested = chat.body.model;
      const auto = requested === 'auto';
      // Vectors of different models are not comparable: an index built on `auto` would mix them
      // as soon as routing chose another model (cost, health, exploration).
      if (auto && chat.api === 'embeddings') {
        throw new GatewayError('bad_request', { param: 'model', message: "Embeddings need a named model: 'auto' could change models between requests, and vectors of different models are not comparable." });
      }
      const named = auto ? [] : resolve(requested, 'model');
      // A model the key may not use is refused as such, not as "no candidate".
      if (!auto && !named.some(allowed)) throw new GatewayError('model_not_allowed', { param: 'model' });
      const primary = auto ? keep(catalog.models, AUTO) : keep(named, NAMED);
      const ranked = order(primary);
      if (ranked.length === 0) throw noCandidate(filter.exclusions, health);

      const extra: Candidate[] = [];
      fallback.fallback_models?.forEach((name, i) => extra.push(...order(keep(resolve(name, `modelgate.failover.fallback_models[${i}]`), FALLBACK))));
      fallback.fallback_providers?.forEach((name, i) => {
        if (!providers.has(name)) throw new GatewayError('bad_request', { param: `modelgate.failover.fallback_providers[${i}]`, message: `Unknown provider '${name}'.` });
        const same = auto ? [] : keep(resolve(requested, 'model').filter((m) => m.provider === name), FALLBACK);
        // The requested model if this provider serves it, else this provider's best fit.
        extra.push(...(same.length > 0 ? same : order(keep(catalog.models.filter((m) => m.provider === name), AUTO)).slice(0, 1)));
      });

      const targets = (candidates: Candidate[]) => candidates.map((candidate) => candidate.target);
      if (chat.api === 'embeddings') {
        // Vectors of different models are not comparable: an embeddings request only ever fails
        // over to the same model on another provider.
        if (fallback.fallback_models?.length) {
          throw new GatewayError('bad_request', {
            param: 'modelgate.failover.fallback_models',
            message: "Embeddings never fall back to another model: its vectors would not be comparable with the first model's.",
          });
        }
        const first = ranked[0]!.target.model.id;
        const same = (candidates: Candidate[]) => candidates.filter((candidate) => candidate.target.model.id === first);
        ctx.candidates = candidateChain(targets(same(ranked)), targets(same(extra)));
        ctx.strategy = strategy;
        return;
      }
      ctx.candidates = candidateChain(targets(ranked), targets(extra));
      ctx.strategy = strategy;
    }

    /** The catalog entries a name means (core/model-names.ts), or 404 model_not_found naming `param`. */
    function resolve(name: string, param: string): CatalogModel[] {
      const found = modelsNamed(name, catalog, providers);
      if (found.length === 0) throw new GatewayError('model_not_found', { param });
      return [...found];
    }

    return {
      name: 'router',
      step: {
        name: 'router',
        scope: 'chat',
        handle(ctx, next) {
          route(ctx);
          return next();
        },
      },
    };
  },
};

function parseWeights(entries: readonly string[], providers: ReadonlyMap<string, Provider>): Map<string, number> {
  const weights = new Map<string, number>();
  for (const entry of entries) {
    const [name, weight] = entry.split(':') as [string, string];
    if (!providers.has(name)) throw new ConfigError([`MODELGATE_PROVIDER_WEIGHTS: unknown provider "${name}" (known: ${[...providers.keys()].join(', ')})`]);
    weights.set(name, Number(weight));
  }
  return weights;
}
