// What live traffic says about each provider: recent success rate, latency percentiles, last error,
// circuit state, Retry-After cooldowns (per provider+model: a rate limit on one model says nothing
// about the provider's others), and moving averages of latency per provider+model (time to
// the usable answer: the whole completion, or a stream's first content — kept apart, since they
// differ) that performance routing ranks by. Fed by the failover plugin after every attempt; read
// by the router, GET /v1/providers/status and the metrics.
//
// Provider keys are the adapters' names, a fixed set. Model keys are whatever a client named (any
// name goes to the custom provider when unpriced models are allowed): those maps are LRUs of
// MAX_TRACKED_MODELS entries, or 4,200 distinct names held 650 MB for good. The router loses the
// average of a model not used for that many others, and ranks it as new.
import { LRUCache } from 'lru-cache';

export type CircuitState = 'closed' | 'open' | 'half_open' | 'disabled';

export interface Observation {
  provider: string;
  model: string;
  stream: boolean;
  ok: boolean;
  /** Time to the usable answer: whole response, or first content of a stream. */
  latencyMs: number;
  error?: { message: string; status: number; reason: string };
}

export interface ProviderStatus {
  provider: string;
  circuit: CircuitState;
  /** Share of successful attempts among the last WINDOW; null before any traffic. */
  successRate: number | null;
  requests: number;
  latencyMs: { p50: number; p95: number } | null;
  lastError: { message: string; status: number; reason: string; at: string } | null;
  /** The latest Retry-After cooldown still ahead among the provider's models, if any. */
  cooldownUntil: string | null;
  /** Every model of the provider still cooling down, and until when. */
  cooldowns: Array<{ model: string; until: string }>;
}

interface Average {
  value: number;
  samples: number;
}

const WINDOW = 200;
/** Provider+model entries remembered (both modes together; per provider for cooldowns): far above the catalog's 42 models × 2 modes. */
export const MAX_TRACKED_MODELS = 1000;
/** Weight of the newest observation in the moving average: recent traffic dominates within a few requests. */
const ALPHA = 0.3;

class Ring {
  readonly ok: boolean[] = [];
  readonly latency: number[] = [];
  push(ok: boolean, latencyMs: number): void {
    this.ok.push(ok);
    if (ok) this.latency.push(latencyMs);
    if (this.ok.length > WINDOW) this.ok.shift();
    if (this.latency.length > WINDOW) this.latency.shift();
  }
}

export class HealthRegistry {
  private readonly rings = new Map<string, Ring>();
  /** provider+model+mode → average. */
  private readonly averages = new LRUCache<string, Average>({ max: MAX_TRACKED_MODELS });
  private readonly providerAverages = new Map<string, Average>();
  private readonly lastErrors = new Map<string, NonNullable<ProviderStatus['lastError']>>();
  private readonly circuits = new Map<string, CircuitState>();
  /** When an open circuit lets its probe through (after the recovery timeout). */
  private readonly probeAt = new Map<string, number>();
  /** provider → model → until (ms epoch). */
  private readonly cooldowns = new Map<string, LRUCache<string, number>>();
  private readonly listeners: Array<(provider: string, state: CircuitState) => void> = [];

  record(observation: Observation): void {
    const { provider, model, ok, latencyMs, stream } = observation;
    let ring = this.rings.get(provider);
    if (!ring) this.rings.set(provider, (ring = new Ring()));
    ring.push(ok, latencyMs);
    if (ok) {
      average(this.averages, modelKey(provider, model, stream), latencyMs);
      average(this.providerAverages, providerKey(provider, stream), latencyMs);
    } else if (observation.error) {
      this.lastErrors.set(provider, { ...observation.error, at: new Date().toISOString() });
    }
  }

  /** Moving-average latency of a provider+model in this mode, with how many samples it rests on. */
  modelLatency(provider: string, model: string, stream: boolean): Average | undefined {
    return this.averages.get(modelKey(provider, model, stream));
  }

  /** Moving-average latency over all of a provider's models in this mode. */
  providerLatency(provider: string, stream: boolean): Average | undefined {
    return this.providerAverages.get(providerKey(provider, stream));
  }

  /**
   * The provider said "come back later" (Retry-After) for this model: skip the provider+model until
   * then. The caller caps `ms` (MODELGATE_MAX_RETRY_AFTER).
   */
  coolDown(provider: string, model: string, ms: number, now = Date.now()): void {
    let models = this.cooldowns.get(provider);
    if (!models) this.cooldowns.set(provider, (models = new LRUCache({ max: MAX_TRACKED_MODELS })));
    const until = now + ms;
    if (until > (models.get(model) ?? 0)) models.set(model, until);
  }

  /** ms the provider still wants us to wait before calling this model, 0 when it may be called. */
  cooldownRemaining(provider: string, model: string, now = Date.now()): number {
    const models = this.cooldowns.get(provider);
    const until = models?.get(model);
    if (until === undefined) return 0;
    if (until <= now) {
      models!.delete(model);
      return 0;
    }
    return until - now;
  }

  /** The provider's models still cooling down, latest first. */
  private cooling(provider: string, now = Date.now()): Array<{ model: string; until: number }> {
    const models = this.cooldowns.get(provider);
    if (!models) return [];
    for (const [model, until] of [...models.entries()]) if (until <= now) models.delete(model);
    return [...models.entries()].map(([model, until]) => ({ model, until })).sort((a, b) => b.until - a.until);
  }

  /** `probeAt`: for an open circuit, when it will let one probe request through. */
  setCircuit(provider: string, state: CircuitState, probeAt?: number): void {
    if (state === 'open' && probeAt !== undefined) this.probeAt.set(provider, probeAt);
    if (this.circuits.get(provider) === state) return;
    this.circuits.set(provider, state);
    for (const listener of this.listeners) listener(provider, state);
  }

  circuit(provider: string): CircuitState {
    return this.circuits.get(provider) ?? 'closed';
  }

  /** Open and not yet due for its probe: no request should be sent. */
  circuitOpen(provider: string, now = Date.now()): boolean {
    return this.circuit(provider) === 'open' && now < (this.probeAt.get(provider) ?? Infinity);
  }

  /** ms until an open circuit lets a probe through (0 when it is not open). */
  circuitRemaining(provider: string, now = Date.now()): number {
    return this.circuitOpen(provider, now) ? this.probeAt.get(provider)! - now : 0;
  }

  onCircuitChange(listener: (provider: string, state: CircuitState) => void): void {
    this.listeners.push(listener);
  }

  /** How many provider+model entries each map holds now: for the test of their bounds. */
  sizes(): { averages: number; cooldowns: number } {
    let cooldowns = 0;
    for (const models of this.cooldowns.values()) cooldowns += models.size;
    return { averages: this.averages.size, cooldowns };
  }

  status(provider: string): ProviderStatus {
    const ring = this.rings.get(provider);
    const total = ring?.ok.length ?? 0;
    const successes = ring ? ring.ok.filter(Boolean).length : 0;
    const sorted = ring ? [...ring.latency].sort((a, b) => a - b) : [];
    const cooling = this.cooling(provider);
    return {
      provider,
      circuit: this.circuit(provider),
      successRate: total === 0 ? null : successes / total,
      requests: total,
      latencyMs: sorted.length === 0 ? null : { p50: round(percentile(sorted, 0.5)), p95: round(percentile(sorted, 0.95)) },
      lastError: this.lastErrors.get(provider) ?? null,
      cooldownUntil: cooling.length > 0 ? new Date(cooling[0]!.until).toISOString() : null,
      cooldowns: cooling.map(({ model, until }) => ({ model, until: new Date(until).toISOString() })),
    };
  }
}

const modelKey = (provider: string, model: string, stream: boolean) => `${provider}/${model}/${stream ? 'stream' : 'json'}`;
const providerKey = (provider: string, stream: boolean) => `${provider}//${stream ? 'stream' : 'json'}`;

function average(map: { get(key: string): Average | undefined; set(key: string, value: Average): unknown }, key: string, sample: number): void {
  const current = map.get(key);
  if (!current) map.set(key, { value: sample, samples: 1 });
  else {
    current.value += ALPHA * (sample - current.value);
    current.samples++;
  }
}

function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[index]!;
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
