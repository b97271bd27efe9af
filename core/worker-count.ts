// How many worker processes MODELGATE_WORKERS asks for, and whether they may run: workers are
// replicas on one machine, so what replicas share through Redis — rate counters, budgets, key
// revocations (MODELGATE_STORE=redis) and the response cache (MODELGATE_CACHE_TYPE=redis) — must be
// there, or each worker would enforce its own copy (docs/operations.md, "Workers").
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** The settings the decision reads (validated: MODELGATE_WORKERS matches its pattern). */
export interface WorkerSettings {
  MODELGATE_WORKERS: string;
  MODELGATE_STORE: 'embedded' | 'redis';
  MODELGATE_CACHE_ENABLED: boolean;
  MODELGATE_CACHE_TYPE: 'memory' | 'redis';
  MODELGATE_LOG_FILE?: string;
  MODELGATE_LOG_ROTATION: boolean;
}

/** What each setting sharingProblems names must be for several workers. */
const REQUIRED: Record<string, string> = { MODELGATE_STORE: 'redis', MODELGATE_CACHE_TYPE: 'redis', MODELGATE_LOG_ROTATION: 'false' };

export interface WorkerPlan {
  count: number;
  /** Why `auto` settled for one worker on a machine with several cores (logged at start). */
  reason?: string;
}

/** Problems that stop the start with `count` workers, each naming the setting to change. */
export function sharingProblems(settings: WorkerSettings, count: number): string[] {
  if (count <= 1) return [];
  const problems: string[] = [];
  const workers = `with MODELGATE_WORKERS=${settings.MODELGATE_WORKERS} (${count} workers)`;
  if (settings.MODELGATE_STORE !== 'redis') {
    problems.push(`MODELGATE_STORE: must be redis ${workers}: rate counters, budgets and key revocations must be shared by every worker, or each enforces its own`);
  }
  if (settings.MODELGATE_CACHE_ENABLED && settings.MODELGATE_CACHE_TYPE !== 'redis') {
    problems.push(`MODELGATE_CACHE_TYPE: must be redis ${workers} (or MODELGATE_CACHE_ENABLED=false): a memory cache would be one per worker`);
  }
  if (settings.MODELGATE_LOG_FILE && settings.MODELGATE_LOG_ROTATION) {
    problems.push(`MODELGATE_LOG_ROTATION: must be false ${workers}: every worker would rotate MODELGATE_LOG_FILE on its own (log to stdout, or rotate with logrotate's copytruncate)`);
  }
  return problems;
}

/**
 * Cores this process may use: the CPUs it may run on, and no more than a cgroup v2 CPU quota allows
 * (`docker run --cpus=2` on a 64-core host: 2, not 64 workers of ~150 MB each).
 */
export function usableCores(cpuMax = readCpuMax()): number {
  const cores = availableParallelism();
  const [quota, period] = (cpuMax ?? '').trim().split(/\s+/);
  const limit = Number(quota) / Number(period);
  return quota !== 'max' && Number.isFinite(limit) && limit > 0 ? Math.max(1, Math.min(cores, Math.ceil(limit))) : cores;
}

function readCpuMax(): string | undefined {
  try {
    return readFileSync('/sys/fs/cgroup/cpu.max', 'utf8');
  } catch {
    return undefined; // not cgroup v2, or not Linux
  }
}

export function planWorkers(settings: WorkerSettings, cores = usableCores()): WorkerPlan {
  if (settings.MODELGATE_WORKERS !== 'auto') return { count: Number(settings.MODELGATE_WORKERS) };
  if (cores <= 1) return { count: 1 };
  // `auto` is the Docker image's default: an image started without Redis still starts, on one worker.
  const problems = sharingProblems(settings, cores);
  if (problems.length === 0) return { count: cores };
  const changes = problems.map((problem) => {
    const name = problem.split(':')[0]!;
    return `${name}=${REQUIRED[name]}`;
  });
  return { count: 1, reason: `MODELGATE_WORKERS=auto runs one worker, not one per core (${cores}): that needs ${changes.join(' and ')} (docs/operations.md, "Workers")` };
}
