// Orders candidates by strategy. cost_optimized: cheapest estimate first. quality_optimized:
// highest quality first, models whose observed latency exceeds response_time_limit after the rest.
// performance_optimized: lowest latency — the model's moving average, else its provider's, else
// the catalog's nominal value — with a small exploration share that sends a request to the
// least-measured other candidate, so the ranking follows change (half of the requests while a top
// contender was never measured, so real latencies are learned within a few requests). Candidates
// that are equally good (same score within a tolerance) are ordered by cost when cost optimization
// is on, then split by provider weight (weighted random order).
import type { HealthRegistry } from '../../core/health.js';
import type { Candidate } from './candidates.js';

export type Strategy = 'cost_optimized' | 'quality_optimized' | 'performance_optimized';

export interface RankOptions {
  strategy: Strategy;
  stream: boolean;
  responseTimeLimit: number;
  costTieBreak: boolean;
  weights: ReadonlyMap<string, number>;
  exploration: number;
  health: HealthRegistry;
  random?: () => number;
}

interface Scored {
  candidate: Candidate;
  /** Lower is better. */
  score: number;
  /** Latency estimate and the samples it rests on (performance and quality strategies). */
  latency: number;
  samples: number;
}

export function rank(candidates: Candidate[], options: RankOptions): Candidate[] {
  if (candidates.length < 2) return candidates;
  const random = options.random ?? Math.random;
  const scored = candidates.map((candidate) => score(candidate, options));
  scored.sort((a, b) => a.score - b.score);
  const ordered = tieBreak(scored, options, random);
  if (options.strategy === 'performance_optimized' && random() < explorationRate(ordered, options.exploration)) explore(ordered, random);
  return ordered.map((entry) => entry.candidate);
}

/** The latency estimate performance routing uses, and how many observations it rests on. */
export function latencyOf(candidate: Candidate, health: HealthRegistry, stream: boolean): { latency: number; samples: number } {
  const { provider, model } = candidate.target;
  const own = health.modelLatency(provider.name, model.id, stream);
  if (own) return { latency: own.value, samples: own.samples };
  const providers = health.providerLatency(provider.name, stream);
  if (providers) return { latency: providers.value, samples: 0 };
  return { latency: model.nominal_latency_ms, samples: 0 };
}

function score(candidate: Candidate, options: RankOptions): Scored {
  const { latency, samples } = latencyOf(candidate, options.health, options.stream);
  let value: number;
  switch (options.strategy) {
    case 'cost_optimized':
      value = candidate.cost ?? Infinity;
      break;
    case 'quality_optimized': {
      // Known to be too slow: after every model that is not (quality still orders each group).
      const tooSlow = samples > 0 && latency > options.responseTimeLimit;
      value = (tooSlow ? 1 : 0) - candidate.target.model.quality.score;
      break;
    }
    case 'performance_optimized':
      value = latency;
      break;
  }
  return { candidate, score: value, latency, samples };
}

/** Whether two scores are "equally good" for this strategy. */
function equal(a: number, b: number, strategy: Strategy): boolean {
  if (a === b) return true;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  if (strategy === 'performance_optimized') return Math.abs(a - b) <= 0.1 * Math.min(a, b);
  if (strategy === 'cost_optimized') return Math.abs(a - b) <= 0.01 * Math.min(Math.abs(a), Math.abs(b));
  return Math.abs(a - b) < 1e-9;
}

function tieBreak(sorted: Scored[], options: RankOptions, random: () => number): Scored[] {
  const out: Scored[] = [];
  for (let start = 0; start < sorted.length; ) {
    let end = start + 1;
    while (end < sorted.length && equal(sorted[start]!.score, sorted[end]!.score, options.strategy)) end++;
    const group = sorted.slice(start, end);
    if (group.length > 1) {
      // Exponential race: each draws -ln(U)/weight, smallest first — a weighted random order.
      const draw = new Map(group.map((entry) => [entry, -Math.log(1 - random()) / (options.weights.get(entry.candidate.target.provider.name) ?? 1)]));
      group.sort((a, b) => {
        if (options.costTieBreak && options.strategy !== 'cost_optimized') {
          const byCost = (a.candidate.cost ?? Infinity) - (b.candidate.cost ?? Infinity);
          if (byCost !== 0 && !equal(a.candidate.cost ?? Infinity, b.candidate.cost ?? Infinity, 'cost_optimized')) return byCost;
        }
        return draw.get(a)! - draw.get(b)!;
      });
    }
    out.push(...group);
    start = end;
  }
  return out;
}

/** How many top candidates count as "in contention" for faster learning. */
const CONTENDERS = 5;
/** Exploration rate while a contender has never been measured: learn the real latencies fast. */
const UNMEASURED_EXPLORATION = 0.5;

/**
 * The configured share, raised while one of the top contenders has no observation of its own:
 * until then it ranks on a guess (its provider's latency or the catalog's nominal value), and a
 * really faster provider would otherwise wait for the occasional exploration to be discovered.
 */
function explorationRate(ordered: Scored[], configured: number): number {
  if (configured === 0) return 0; // the operator turned exploration off
  const unmeasured = ordered.slice(1, CONTENDERS).some((entry) => entry.samples === 0);
  return unmeasured ? Math.max(configured, UNMEASURED_EXPLORATION) : configured;
}

/** Moves the least-measured other candidate to the front, so stale rankings get re-measured. */
function explore(ordered: Scored[], random: () => number): void {
  const others = ordered.slice(1);
  const fewest = Math.min(...others.map((entry) => entry.samples));
  const pool = others.filter((entry) => entry.samples === fewest);
  const chosen = pool[Math.floor(random() * pool.length)]!;
  ordered.splice(ordered.indexOf(chosen), 1);
  ordered.unshift(chosen);
}
