// Metrics: Prometheus text at GET /metrics (outside /v1, no API key; a bearer token when
// MODELGATE_METRICS_TOKEN is set, else 401). Observes every finished request, refused ones included,
// and changes nothing on the request path. Reads MODELGATE_METRICS_ENABLED, _INTERVAL and _TOKEN.
import { defineSettings, type SettingsOf } from '../core/settings.js';
import { GatewayError } from '../core/errors.js';
import { baseHeaders } from '../core/respond.js';
import type { RequestContext } from '../core/context.js';
import type { BudgetEvent, AlertEvent, DeliveryEvent, FallbackEvent } from '../core/events.js';
import type { PluginDeps, PluginModule } from '../core/pipeline.js';
import { workerMetrics } from '../core/worker-metrics.js';
import { bearerToken, secretMatcher } from './auth.js';
import { createFamilies } from './metrics/families.js';
import { KeyLabels } from './metrics/key-labels.js';
import type { CounterSeries } from './metrics/local-series.js';
import { ALERT_ACTIONS, STORE_COMPONENTS, Children, REFUSAL_BY_KIND, REFUSAL_REASONS, cacheLabel, modelLabel, providerLabel, routeLabel } from './metrics/labels.js';

const settings = defineSettings({
  MODELGATE_METRICS_ENABLED: {
    type: 'boolean',
    default: true,
    variants: ['staging', 'prod'],
    description: 'Serve Prometheus metrics at GET /metrics. Off: no route (404) and nothing is measured.',
  },
  MODELGATE_METRICS_INTERVAL: {
    type: 'integer',
    default: 60000,
    minimum: 1000,
    description:
      "ms between refreshes of what is too costly to compute on every scrape: the Redis cache's entry count and size (one SCAN) and the memory cache's sweep of expired entries. Every other gauge is read at scrape time.",
  },
  MODELGATE_METRICS_TOKEN: {
    type: 'string',
    secret: true,
    description: 'When set, GET /metrics requires `Authorization: Bearer <token>` (Prometheus: `authorization: {credentials: ...}` in the scrape config).',
  },
  MODELGATE_METRICS_MAX_KEYS: {
    type: 'integer',
    default: 100,
    minimum: 0,
    maximum: 10_000,
    description:
      'API keys with series of their own in modelgate_key_requests_total and modelgate_key_cost_usd_total: the most recently active ones; the rest count under key_id="other", and a key idle for 10 minutes gives its place up. Only while MODELGATE_METRICS_TOKEN is set: an open /metrics would show every key\'s spend to any caller, which /v1/usage refuses. 0: every key counts as `other`.',
  },
});

export const metrics: PluginModule<typeof settings, Pick<PluginDeps, 'catalog' | 'providers' | 'health' | 'events' | 'cacheStats' | 'keyStats' | 'inflight'>> = {
  name: 'metrics',
  settings,
  create(values, deps) {
    const s = values as SettingsOf<typeof settings>;
    if (!s.MODELGATE_METRICS_ENABLED) return { name: 'metrics' };

    const circuitProviders = new Set([...deps.providers.values()].filter((provider) => provider.configured).map((provider) => provider.name));
    // Where each budget stood at the last settlement (every request settles): the gauges read it at scrape.
    const budgets = new Map<string, { usedRatio: number; spentUsd: number }>();
    const f = createFamilies({
      health: deps.health,
      circuitProviders: () => circuitProviders,
      cacheStats: () => deps.cacheStats.stats(),
      inflight: () => deps.inflight(),
      keysExpiringSoon: () => deps.keyStats.expiringSoon(),
      budgets: () => budgets,
    });

    deps.health.onCircuitChange((provider, state) => {
      circuitProviders.add(provider);
      f.circuitTransitions.labels(provider, state).inc();
    });
    const onBudget = (event: BudgetEvent) => {
      const budget = budgets.get(event.period);
      if (budget) {
        budget.usedRatio = event.usedRatio;
        budget.spentUsd = event.spentUsd;
      } else budgets.set(event.period, { usedRatio: event.usedRatio, spentUsd: event.spentUsd });
    };
    const onAlert = (event: AlertEvent) => f.alerts.labels(ALERT_ACTIONS.has(event.action) ? event.action : 'other').inc();
    // Components are the gateway's own Redis-backed parts: a fixed, small set of label values.
    const onFallback = (event: FallbackEvent) => f.storeFallbacks.labels(STORE_COMPONENTS.has(event.component) ? event.component : 'other').inc();
    deps.events.on('budget', onBudget);
    deps.events.on('alert', onAlert);
    deps.events.on('fallback', onFallback);
    // Channels and outcomes are the dispatcher's own fixed sets.
    const onDelivery = (event: DeliveryEvent) => f.deliveries.labels(event.channel, event.outcome).inc();
    deps.events.on('delivery', onDelivery);

    let refreshing = false;
    const refresh = () => {
      if (refreshing) return;
      refreshing = true;
      void deps.cacheStats.refresh().finally(() => (refreshing = false));
    };
    const timer = setInterval(refresh, s.MODELGATE_METRICS_INTERVAL);
    timer.unref();

    const refusals = Object.fromEntries(
      REFUSAL_REASONS.map((reason) => {
        const child = f.refusals.series(reason);
        child.inc(0); // exported as 0 from the start, so rate() and alerts see the series before the first refusal
        return [reason, child];
      }),
    );
    const perRequest = new Children(5, ([route, provider, model, status, cache]) => ({
      count: f.requests.series(route!, provider!, model!, status!, cache!),
      duration: f.duration.series(route!, provider!, model!, status!, cache!),
    }));
    const perModel = new Children(2, ([provider, model]) => ({
      upstream: f.upstream.series(provider!, model!),
      overhead: f.overhead.series(provider!),
      ttft: f.ttft.series(provider!, model!),
      interToken: f.interToken.series(provider!, model!),
      cost: f.cost.series(provider!, model!),
      saved: f.saved.series(provider!, model!),
      retries: f.retries.series(provider!, model!),
      fallbacks: f.fallbacks.series(provider!, model!),
    }));
    const tokens = new Children(3, ([provider, model, cache]) => ({
      prompt: f.tokens.series(provider!, model!, 'prompt', cache!),
      completion: f.tokens.series(provider!, model!, 'completion', cache!),
    }));

    // Per-key series only behind the metrics token: an open /metrics would show any caller every key's spend.
    const keySeries = new Map<string, { requests: CounterSeries; cost: CounterSeries }>();
    const keyLabels = new KeyLabels(s.MODELGATE_METRICS_TOKEN === undefined ? 0 : s.MODELGATE_METRICS_MAX_KEYS, (keyId) => {
      keySeries.delete(keyId);
      f.keyRequests.remove(keyId);
      f.keyCost.remove(keyId);
    });
    const keyCounters = (keyId: string) => {
      let counters = keySeries.get(keyId);
      if (counters === undefined) keySeries.set(keyId, (counters = { requests: f.keyRequests.series(keyId), cost: f.keyCost.series(keyId) }));
      return counters;
    };

    const matchesToken = s.MODELGATE_METRICS_TOKEN === undefined ? undefined : secretMatcher(s.MODELGATE_METRICS_TOKEN);
    const authorized = (ctx: RequestContext) => {
      if (!matchesToken) return true;
      const token = bearerToken(ctx.headers.authorization);
      return token !== undefined && matchesToken(token);
    };

    // Under MODELGATE_WORKERS, every worker's metrics merged; else this process's.
    const readMetrics = workerMetrics(f.registry) ?? (() => f.registry.metrics());

    return {
      name: 'metrics',
      routes: [
        {
          method: 'GET',
          path: '/metrics',
          public: true,
          async handle(ctx) {
            if (!authorized(ctx)) {
              throw new GatewayError('invalid_api_key', { headers: { 'www-authenticate': 'Bearer realm="modelgate-metrics", error="invalid_token"' } });
            }
            const text = await readMetrics();
            ctx.status = 200;
            ctx.res.writeHead(200, { ...baseHeaders(ctx), 'content-type': f.registry.contentType, 'content-length': Buffer.byteLength(text) });
            ctx.res.end(text);
          },
        },
      ],

      observe(ctx) {
        const outcome = ctx.outcome;
        const seconds = (performance.now() - ctx.startedAt) / 1000;
        const provider = providerLabel(ctx);
        const model = modelLabel(ctx, deps.catalog);
        const cache = cacheLabel(ctx);
        const request = perRequest.get(routeLabel(ctx), provider, model, String(ctx.status ?? 0), cache);
        request.count.inc();
        request.duration.observe(seconds);
        if (outcome.cache === 'HIT') f.cacheHits.inc();
        else if (outcome.cache === 'MISS') f.cacheMisses.inc();
        else if (outcome.cache === 'BYPASS') f.cacheBypasses.inc();
        const refusal = ctx.error && REFUSAL_BY_KIND[ctx.error.kind];
        if (refusal) refusals[refusal]!.inc();
        if (ctx.principal) {
          const key = keyCounters(keyLabels.label(ctx.principal.keyId));
          key.requests.inc();
          if (outcome.cost) key.cost.inc(outcome.cost);
        }
        if (!outcome.target) return;

        const series = perModel.get(provider, model);
        if (outcome.usage) {
          const counted = tokens.get(provider, model, cache);
          counted.prompt.inc(outcome.usage.prompt_tokens);
          counted.completion.inc(outcome.usage.completion_tokens);
        }
        if (outcome.cost) series.cost.inc(outcome.cost);
        if (outcome.savedUsd) series.saved.inc(outcome.savedUsd);
        if (outcome.attempts === 0) return; // a cache hit: no provider time to report
        series.upstream.observe(outcome.upstreamMs / 1000);
        // Backoffs and failover delays are waits the operator configured, not the gateway's own time.
        series.overhead.observe(Math.max(0, seconds - (outcome.upstreamMs + outcome.waitedMs) / 1000));
        if (outcome.ttftMs !== undefined) series.ttft.observe(outcome.ttftMs / 1000);
        if (outcome.interTokenMs !== undefined) series.interToken.observe(outcome.interTokenMs / 1000);
        if (outcome.retries) series.retries.inc(outcome.retries);
        if (outcome.fallbacks) series.fallbacks.inc(outcome.fallbacks);
      },

      async close() {
        clearInterval(timer);
        deps.events.off('budget', onBudget);
        deps.events.off('alert', onAlert);
        deps.events.off('delivery', onDelivery);
        deps.events.off('fallback', onFallback);
      },
    };
  },
};
