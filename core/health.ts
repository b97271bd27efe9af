// What live traffic says about each provider: recent success rate, latency percentiles, last error,
// circuit state, and a moving average of latency per provider+model (time to first token for
// streams) that performance routing ranks by. Fed by the failover plugin after every attempt; read
// by the router, GET /v1/providers/status and the metrics.

export type CircuitState = 'closed' | 'open' | 'half_open' | 'disabled';

export interface Observation {
  provider: string;
  model: string;
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
}

const WINDOW = 200;
/** Weight of the newest observation in the moving average. */
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
  private readonly averages = new Map<string, { value: number; samples: number }>();
  private readonly providerAverages = new Map<string, { value: number; samples: number }>();
  private readonly lastErrors = new Map<string, ProviderStatus['lastError']>();
  private readonly circuits = new Map<string, CircuitState>();
  private readonly listeners: Array<(provider: string, state: CircuitState) => void> = [];

  record(observation: Observation): void {
    const { provider, model, ok, latencyMs } = observation;
    let ring = this.rings.get(provider);
    if (!ring) this.rings.set(provider, (ring = new Ring()));
    ring.push(ok, latencyMs);
    if (ok) {
      average(this.averages, `${provider}/${model}`, latencyMs);
      average(this.providerAverages, provider, latencyMs);
    } else if (observation.error) {
      this.lastErrors.set(provider, { ...observation.error, at: new Date().toISOString() });
    }
  }

  /** Moving-average latency of a provider+model, if it has served anything. */
  modelLatency(provider: string, model: string): number | undefined {
    return this.averages.get(`${provider}/${model}`)?.value;
  }

  /** Moving-average latency over all of a provider's models. */
  providerLatency(provider: string): number | undefined {
    return this.providerAverages.get(provider)?.value;
  }

  setCircuit(provider: string, state: CircuitState): void {
    if (this.circuits.get(provider) === state) return;
    this.circuits.set(provider, state);
    for (const listener of this.listeners) listener(provider, state);
  }

  circuit(provider: string): CircuitState {
    return this.circuits.get(provider) ?? 'closed';
  }

  onCircuitChange(listener: (provider: string, state: CircuitState) => void): void {
    this.listeners.push(listener);
  }

  status(provider: string): ProviderStatus {
    const ring = this.rings.get(provider);
    const total = ring?.ok.length ?? 0;
    const successes = ring ? ring.ok.filter(Boolean).length : 0;
    const sorted = ring ? [...ring.latency].sort((a, b) => a - b) : [];
    return {
      provider,
      circuit: this.circuit(provider),
      successRate: total === 0 ? null : successes / total,
      requests: total,
      latencyMs: sorted.length === 0 ? null : { p50: round(percentile(sorted, 0.5)), p95: round(percentile(sorted, 0.95)) },
      lastError: this.lastErrors.get(provider) ?? null,
    };
  }
}

function average(map: Map<string, { value: number; samples: number }>, key: string, sample: number): void {
  const current = map.get(key);
  if (!current) map.set(key, { value: sample, samples: 1 });
  else {
    current.value = current.value + ALPHA * (sample - current.value);
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
