// Every metric family the gateway exports, on a Registry of its own (never prom-client's global one,
// so gateways sharing a process keep separate counts). Gauges that mirror state kept elsewhere —
// in-flight requests, circuits, cache size — are read when Prometheus scrapes, not updated per request.
// Under MODELGATE_WORKERS every worker's families merge at a scrape (core/worker-metrics.ts):
// counters and histograms add up; gauges the workers read alike (the Redis cache, budgets, keys) or
// whose worst worker matters (circuits) merge as their maximum.
// The families every request updates are LocalCounter / LocalHistogram (local-series.ts): counted
// in plain fields, exported at a scrape exactly as prom-client's Counter and Histogram would be.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { LocalCounter, LocalHistogram } from './local-series.js';
import type { HealthRegistry, CircuitState } from '../../core/health.js';
import type { CacheStats } from '../../core/cache-stats.js';

const PREFIX = 'modelgate_';
const CIRCUIT_STATES: readonly CircuitState[] = ['closed', 'open', 'half_open', 'disabled'];

// Seconds. Whole requests span cache hits (sub-millisecond) to long generations.
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const UPSTREAM_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120];
const OVERHEAD_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];
const TTFT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30];
const INTER_TOKEN_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1];

export interface Sources {
  health: HealthRegistry;
  /** Providers whose circuit is reported (the configured ones, and any that changed state). */
  circuitProviders(): Iterable<string>;
  cacheStats(): CacheStats | undefined;
  inflight(): number;
  /** Active API keys expiring within 7 days (the keys plugin's count); undefined without one. */
  keysExpiringSoon(): number | undefined;
  /** Where each budget stood at the last settlement, by period: read at scrape, not set on every request. */
  budgets(): ReadonlyMap<string, { usedRatio: number; spentUsd: number }>;
}

export type Families = ReturnType<typeof createFamilies>;

export function createFamilies(sources: Sources) {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry, prefix: PREFIX });
  const modelLabels = ['provider', 'model'] as const;
  const requestLabels = ['route', 'provider', 'model', 'status', 'cache'] as const;

  /** A counter mirroring a cumulative number kept by the cache (evictions, errors). */
  const mirroredCounter = (name: string, help: string, read: (stats: CacheStats) => number) => {
    let last = 0;
    return new Counter({
      name,
      help,
      registers,
      collect() {
        const stats = sources.cacheStats();
        if (!stats) return;
        const now = read(stats);
        if (now > last) this.inc(now - last);
        last = now;
      },
    });
  };

  /** A gauge per budget period, read at scrape from where each budget stood at the last settlement. */
  const budgetGauge = (name: string, help: string, read: (budget: { usedRatio: number; spentUsd: number }) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['period'] as const,
      aggregator: 'max',
      registers,
      collect() {
        for (const [period, budget] of sources.budgets()) this.set({ period }, read(budget));
      },
    });

  return {
    registry,
    requests: new LocalCounter({ name: `${PREFIX}requests_total`, help: 'Requests answered, by route, provider, catalog model, HTTP status and cache result.', labelNames: requestLabels, registers }),
    duration: new LocalHistogram({ name: `${PREFIX}request_duration_seconds`, help: 'Time from request to the end of the response.', labelNames: requestLabels, buckets: REQUEST_BUCKETS, registers }),
    upstream: new LocalHistogram({ name: `${PREFIX}upstream_duration_seconds`, help: 'Time spent waiting on providers per request, all attempts together (streams: until their end).', labelNames: modelLabels, buckets: UPSTREAM_BUCKETS, registers }),
    overhead: new LocalHistogram({ name: `${PREFIX}gateway_overhead_seconds`, help: "The gateway's own time per request that reached a provider: total minus upstream and the configured waits between attempts (retry backoffs, failover delay).", labelNames: ['provider'] as const, buckets: OVERHEAD_BUCKETS, registers }),
    ttft: new LocalHistogram({ name: `${PREFIX}time_to_first_token_seconds`, help: 'Streams answered by a provider: time from request to the first content sent.', labelNames: modelLabels, buckets: TTFT_BUCKETS, registers }),
    interToken: new LocalHistogram({ name: `${PREFIX}inter_token_latency_seconds`, help: 'Streams answered by a provider: mean time between content chunks, one sample per stream.', labelNames: modelLabels, buckets: INTER_TOKEN_BUCKETS, registers }),
    tokens: new LocalCounter({ name: `${PREFIX}tokens_total`, help: 'Tokens as reported by the provider (type prompt or completion); cache="hit" counts tokens served from the cache.', labelNames: ['provider', 'model', 'type', 'cache'] as const, registers }),
    keyRequests: new LocalCounter({ name: `${PREFIX}key_requests_total`, help: 'Requests answered per API key id (the MODELGATE_METRICS_MAX_KEYS most recently active keys; `other` for the rest).', labelNames: ['key_id'] as const, registers }),
    keyCost: new LocalCounter({ name: `${PREFIX}key_cost_usd_total`, help: 'USD spent at catalog prices per API key id (bounded like key_requests_total).', labelNames: ['key_id'] as const, registers }),
    cost: new LocalCounter({ name: `${PREFIX}cost_usd_total`, help: 'USD spent at catalog prices (cache hits cost 0).', labelNames: modelLabels, registers }),
    saved: new LocalCounter({ name: `${PREFIX}cache_saved_usd_total`, help: 'USD cache hits saved: what each served answer cost when it was generated.', labelNames: modelLabels, registers }),
    cacheHits: new LocalCounter({ name: `${PREFIX}cache_hits_total`, help: 'Chat requests answered from the cache.', registers }),
    cacheMisses: new LocalCounter({ name: `${PREFIX}cache_misses_total`, help: 'Chat requests the cache could not answer (their complete answers are stored).', registers }),
    cacheBypasses: new LocalCounter({ name: `${PREFIX}cache_bypasses_total`, help: 'Chat requests that skipped the cache (Cache-Control, x-modelgate-cache: bypass, modelgate.cache).', registers }),
    cacheEvictions: mirroredCounter(`${PREFIX}cache_evictions_total`, 'Entries the memory cache dropped to stay within MODELGATE_CACHE_MAX_SIZE.', (stats) => stats.evictions),
    cacheErrors: mirroredCounter(`${PREFIX}cache_errors_total`, 'Cache backend operations that failed (Redis away or slow): served as a miss, or not stored.', (stats) => stats.errors),
    cacheEntries: new Gauge({
      aggregator: 'max',
      name: `${PREFIX}cache_entries`,
      help: 'Answers in the cache (Redis: shared by all replicas, counted every MODELGATE_METRICS_INTERVAL).',
      labelNames: ['backend'] as const,
      registers,
      collect() {
        const stats = sources.cacheStats();
        if (stats) this.labels(stats.backend).set(stats.entries);
      },
    }),
    cacheSize: new Gauge({
      aggregator: 'max',
      name: `${PREFIX}cache_size_bytes`,
      help: "Bytes the cached answers take as stored (compressed when MODELGATE_CACHE_COMPRESSION is on); for the memory backend, what each entry really takes (its 128-byte blocks, key and slots).",
      labelNames: ['backend'] as const,
      registers,
      collect() {
        const stats = sources.cacheStats();
        if (stats) this.labels(stats.backend).set(stats.bytes);
      },
    }),
    retries: new LocalCounter({ name: `${PREFIX}retries_total`, help: 'Repeated attempts on the same target, by the provider and model that finally answered (or failed last).', labelNames: modelLabels, registers }),
    fallbacks: new LocalCounter({ name: `${PREFIX}fallbacks_total`, help: 'Moves to another candidate, by the provider and model that finally answered (or failed last).', labelNames: modelLabels, registers }),
    circuit: new Gauge({
      aggregator: 'max',
      name: `${PREFIX}circuit_state`,
      help: "Each provider's circuit breaker: 1 for its current state, 0 for the others.",
      labelNames: ['provider', 'state'] as const,
      registers,
      collect() {
        for (const provider of sources.circuitProviders()) {
          const current = sources.health.circuit(provider);
          for (const state of CIRCUIT_STATES) this.labels(provider, state).set(state === current ? 1 : 0);
        }
      },
    }),
    circuitTransitions: new Counter({ name: `${PREFIX}circuit_transitions_total`, help: 'Circuit state changes, by provider and the state entered.', labelNames: ['provider', 'state'] as const, registers }),
    refusals: new LocalCounter({ name: `${PREFIX}refusals_total`, help: "Requests refused by the gateway's guards: auth, ip_filter, rate_limit, cost_guard.", labelNames: ['reason'] as const, registers }),
    budgetRatio: budgetGauge(`${PREFIX}budget_used_ratio`, 'Spend over the cost limit of the current period (day, week, month); 1 means the limit is reached.', (budget) => budget.usedRatio),
    budgetSpent: budgetGauge(`${PREFIX}budget_spent_usd`, 'USD spent in the current period (day, week, month).', (budget) => budget.spentUsd),
    alerts: new Counter({ name: `${PREFIX}alerts_total`, help: 'Alerts fired, by action (email, chat, webhook, pause; other).', labelNames: ['action'] as const, registers }),
    deliveries: new Counter({
      name: `${PREFIX}event_deliveries_total`,
      help: 'Event delivery attempts, by channel (webhook, email, chat, alert_webhook) and outcome (delivered, retried, failed, skipped).',
      labelNames: ['channel', 'outcome'] as const,
      registers,
    }),
    storeFallbacks: new Counter({
      name: `${PREFIX}store_fallbacks_total`,
      help: 'Requests a Redis-backed part answered without Redis (rate-limit: from local limits; cost-guard: refused) because Redis failed or was too slow.',
      labelNames: ['component'] as const,
      registers,
    }),
    inflight: new Gauge({
      name: `${PREFIX}inflight_requests`,
      help: 'Requests being handled, the scrape itself included.',
      registers,
      collect() {
        this.set(sources.inflight());
      },
    }),
    keysExpiringSoon: new Gauge({
      aggregator: 'max',
      name: `${PREFIX}api_keys_expiring_soon`,
      help: 'Active API keys that expire within the next 7 days (refreshed every minute and on every key change).',
      registers,
      collect() {
        this.set(sources.keysExpiringSoon() ?? 0);
      },
    }),
  };
}
