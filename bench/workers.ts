// npm run bench:workers (or benchWorkers() from another benchmark): the gateway with 1 and then 2
// worker processes (MODELGATE_WORKERS), against one fake upstream, at 50 connections, non-stream.
// Both run with the shared state in Redis (MODELGATE_STORE=redis, MODELGATE_CACHE_TYPE=redis, a
// key prefix of their own, deleted at the end), as several workers require, so the ratio measures
// the workers and nothing else. Reports req/s, p50/p99 and CPU µs per request summed over the
// gateway's process tree (primary + workers, from /proc), and the 2/1 ratio of req/s. A third row,
// one worker with the embedded store and memory cache (the defaults), shows what Redis itself costs:
// the gain of 2 workers over a default single process is the other ratio printed.
// Placement: run alone, the load generator pins itself to core 0 as bench/run.ts does; the gateway
// and the fake upstream may run on every core (an inherited pin is undone), so the 2 workers share
// the machine with the load generator and the upstream. On a 2-core machine the ratio is therefore
// a floor, not what 2 cores give a gateway that has them to itself. BENCH_DURATION_MS (default
// 4000), BENCH_ROUNDS (default 2) tune it; the two gateways alternate (1 2 1 2) after a warm-up.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { cpus } from 'node:os';
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { load, percentile } from './load.js';
import { projectRoot } from '../core/paths.js';
import { BENCH_KEY, benchBody, deleteKeys, gatewayEnv, reachableRedis } from './servers.js';

const CONNECTIONS = 50;
const canPin = cpus().length >= 2 && spawnSync('taskset', ['-V']).status === 0;

export interface WorkersRow {
  workers: number;
  /** `redis` (MODELGATE_STORE and MODELGATE_CACHE_TYPE), or `embedded` (the defaults, one worker only). */
  state: 'redis' | 'embedded';
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU time of the primary and its workers per answered request. */
  cpuUsPerRequest: number;
  errors: number;
}

export interface WorkersResult {
  rows: WorkersRow[];
  /** req/s with 2 workers over req/s with 1, both with the state in Redis. */
  scaling: number;
  /** req/s with 2 workers over one default process (embedded store, memory cache). */
  overDefault: number;
  /** Where the processes ran, said in the report. */
  placement: string;
}

export interface WorkersOptions {
  durationMs?: number;
  rounds?: number;
  /** Printed as a table (the default) or only returned. */
  print?: boolean;
}

interface Server {
  child: ChildProcess;
  port: number;
}

/** Starts `node args` on every core (not the caller's pin); resolves once it listens (every worker, for a gateway). */
function start(args: string[], env: Record<string, string>, workers: number): Promise<Server> {
  const everyCore = `0-${cpus().length - 1}`;
  const command = canPin ? 'taskset' : process.execPath;
  const argv = canPin ? ['-c', everyCore, process.execPath, ...args] : args;
  const child = spawn(command, argv, { cwd: projectRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let port: number | undefined;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (/^\d+$/.test(line)) return resolve({ child, port: Number(line) });
      let entry: { msg?: string; url?: string };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        return;
      }
      if (entry.msg === 'modelgate listening') port = Number(new URL(entry.url!).port);
      if (port !== undefined && (workers === 1 || entry.msg === 'workers listening')) resolve({ child, port });
    });
    child.once('exit', (code) => reject(new Error(`${args.at(-1)} exited with ${code} before listening`)));
  });
}

/** CPU ms (user + system) of `root` and every process below it. */
function treeCpuMs(root: number): number {
  const parents = new Map<number, number>();
  const ticks = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const fields = readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]!.split(' ');
      parents.set(Number(name), Number(fields[1]));
      ticks.set(Number(name), Number(fields[11]) + Number(fields[12]));
    } catch {
      // ended meanwhile
    }
  }
  const inTree = (pid: number): boolean => {
    for (let at: number | undefined = pid; at !== undefined && at > 1; at = parents.get(at)) if (at === root) return true;
    return false;
  };
  let total = 0;
  for (const [pid, used] of ticks) if (inTree(pid)) total += used;
  return (total * 1000) / 100; // ticks of 10 ms
}

const body = benchBody(false);

/** The environment bench/run.ts gives its gateway (every plugin on, sized not to refuse), plus Redis and the workers. */
function workersEnv(upstreamPort: number, prefix: string, workers: number, state: WorkersRow['state']): Record<string, string> {
  return {
    ...gatewayEnv(upstreamPort),
    MODELGATE_STORE: state,
    MODELGATE_CACHE_TYPE: state === 'redis' ? 'redis' : 'memory',
    REDIS_KEY_PREFIX: prefix,
    MODELGATE_WORKERS: String(workers),
  };
}

function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

export async function benchWorkers(options: WorkersOptions = {}): Promise<WorkersResult> {
  const durationMs = options.durationMs ?? Number(process.env.BENCH_DURATION_MS ?? 4000);
  const rounds = options.rounds ?? Number(process.env.BENCH_ROUNDS ?? 2);
  const warmupMs = Math.min(1500, durationMs / 2);
  const prefix = `modelgate-bench:${randomBytes(4).toString('hex')}:`;
  const children: ChildProcess[] = [];
  const dataDirs: string[] = [];
  try {
    const upstream = await start(['dist/bench/upstream.js'], {}, 1);
    children.push(upstream.child);
    const gateways: Array<Server & { workers: number; state: WorkersRow['state'] }> = [];
    for (const [workers, state] of [[1, 'embedded'], [1, 'redis'], [2, 'redis']] as const) {
      const env = workersEnv(upstream.port, prefix, workers, state);
      dataDirs.push(env.MODELGATE_DATA_DIR!);
      const server = await start(['dist/core/main.js'], env, workers);
      children.push(server.child);
      gateways.push({ ...server, workers, state });
    }
    const measured = new Map<(typeof gateways)[number], { requests: number; seconds: number; errors: number; latencies: number[]; cpuMs: number }>();
    const run = (port: number, ms: number) => load({ port, path: '/v1/chat/completions', headers: { authorization: `Bearer ${BENCH_KEY}` }, body, connections: CONNECTIONS, durationMs: ms });
    for (const gateway of gateways) await run(gateway.port, warmupMs * 2);
    for (let round = 0; round < rounds; round++) {
      for (const gateway of gateways) {
        await run(gateway.port, warmupMs);
        const before = treeCpuMs(gateway.child.pid!);
        const result = await run(gateway.port, durationMs);
        const cpu = treeCpuMs(gateway.child.pid!) - before;
        const row = measured.get(gateway) ?? { requests: 0, seconds: 0, errors: 0, latencies: [], cpuMs: 0 };
        row.requests += result.requests;
        row.seconds += result.durationMs / 1000;
        row.errors += result.errors;
        for (const ms of result.latenciesMs) row.latencies.push(ms);
        row.cpuMs += cpu;
        measured.set(gateway, row);
      }
    }
    const rows = [...measured].map(([{ workers, state }, row]): WorkersRow => {
      const sorted = Float64Array.from(row.latencies).sort();
      return {
        workers,
        state,
        rps: row.requests / row.seconds,
        p50Ms: percentile(sorted, 0.5),
        p99Ms: percentile(sorted, 0.99),
        cpuUsPerRequest: (row.cpuMs * 1000) / Math.max(1, row.requests),
        errors: row.errors,
      };
    });
    const placement =
      `${cpus().length} cores; the load generator ${pinnedToCoreZero() ? 'on core 0' : 'wherever the caller runs it'}, ` +
      `the gateway (primary + workers) and the fake upstream ${canPin ? 'on every core' : 'unpinned'}: with 2 workers they compete with the load generator and the upstream for the cores`;
    const result = { rows, scaling: rows[2]!.rps / rows[1]!.rps, overDefault: rows[2]!.rps / rows[0]!.rps, placement };
    if (options.print ?? true) report(result, durationMs, rounds);
    return result;
  } finally {
    await Promise.all(children.map(stopped));
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
    const redis = await reachableRedis();
    if (redis) await deleteKeys(redis, prefix).finally(() => redis.disconnect());
    else console.error(`bench: Redis keys under ${prefix} not deleted: Redis not reachable`);
  }
}

function pinnedToCoreZero(): boolean {
  const out = spawnSync('taskset', ['-cp', String(process.pid)], { encoding: 'utf8' });
  return out.status === 0 && /:\s*0\s*$/.test(out.stdout);
}

function report(result: WorkersResult, durationMs: number, rounds: number): void {
  console.log(`\nmodelgate workers scaling — ${new Date().toISOString()} — node ${process.version} — ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}`);
  console.log(`json, ${CONNECTIONS} connections; ${rounds} rounds × ${durationMs} ms per gateway, alternating`);
  console.log(`${result.placement}\n`);
  console.log('| workers | shared state | req/s | p50 ms | p99 ms | CPU µs/req (primary + workers; not redis-server\'s) | errors |');
  console.log('|---|---|---|---|---|---|---|');
  for (const row of result.rows) {
    console.log(`| ${row.workers} | ${row.state === 'redis' ? 'Redis' : 'embedded (defaults)'} | ${row.rps.toFixed(0)} | ${row.p50Ms.toFixed(3)} | ${row.p99Ms.toFixed(3)} | ${row.cpuUsPerRequest.toFixed(0)} | ${row.errors} |`);
  }
  console.log(`\nscaling 1 → 2 workers (both on Redis): ×${result.scaling.toFixed(2)} req/s; 2 workers over one default process: ×${result.overDefault.toFixed(2)}`);
}

// Run on its own (node dist/bench/workers.js): pinned to core 0 like bench/run.ts's load generator.
// dist/ is a link to the build: compared as real paths.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  if (canPin) spawnSync('taskset', ['-cp', '0', String(process.pid)], { stdio: 'ignore' });
  benchWorkers().then(
    (result) => {
      if (result.rows.some((row) => row.errors > 0)) process.exitCode = 1;
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
