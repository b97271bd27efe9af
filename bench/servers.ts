// What the benchmark scripts share: starting a server pinned to core 1 and reading its port, the
// process's CPU time and RSS from /proc, the request bodies, and the gateway's environment.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { projectRoot } from '../core/paths.js';

export const BENCH_KEY = 'uc_bench_0123456789abcdef';
/** The flags `npm start` and the Docker image run the gateway with (package.json "start"). */
export const GATEWAY_NODE_FLAGS = (process.env.BENCH_GATEWAY_FLAGS ?? '').split(' ').filter(Boolean);
/** Load generator on core 0, servers on core 1, where the machine and taskset allow it. */
export const pinned = cpus().length >= 2 && spawnSync('taskset', ['-V']).status === 0;

export function startServer(args: string[], env: Record<string, string> = {}): { child: ChildProcess; port: Promise<number> } {
  const command = pinned ? 'taskset' : process.execPath;
  const argv = pinned ? ['-c', '1', process.execPath, ...args] : args;
  const child = spawn(command, argv, { cwd: projectRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (/^\d+$/.test(line)) return resolve(Number(line));
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'modelgate listening') resolve(Number(new URL(entry.url!).port));
      } catch {
        // other output
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.at(-1)} exited with ${code}`)));
  });
  // A server that dies at boot ends the benchmark at once instead of leaving it waiting.
  port.catch((error: Error) => {
    console.error(error.message);
    process.exit(1);
  });
  return { child, port };
}

/** User + system CPU time of a process, all its threads, in ms (ticks of 10 ms). */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

export function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

/**
 * A ~300-byte chat request, unique per sequence number so the gateway's cache misses; `paced` asks
 * the fake upstream for a paced stream with that seed (bench/paced.ts).
 */
export const benchBody = (stream: boolean, paced?: number) => (sequence: number) =>
  JSON.stringify({
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'You are a concise assistant that answers geography questions.' },
      {
        role: 'user',
        content: `What is the capital of France? Answer in one short sentence, please. Request ${String(sequence).padStart(8, '0')}.${paced === undefined ? '' : ` paced ${paced}`}`,
      },
    ],
    max_tokens: 64,
    temperature: 0.2,
    ...(stream ? { stream: true } : {}),
  });

/** The gateway as shipped, every plugin on and sized so none refuses a benchmark request. */
export function gatewayEnv(upstreamPort: number): Record<string, string> {
  return {
    MODELGATE_API_KEY: BENCH_KEY,
    MODELGATE_HOST: '127.0.0.1',
    MODELGATE_PORT: '0',
    MODELGATE_LOG_LEVEL: 'info',
    MODELGATE_DATA_DIR: mkdtempSync(join(tmpdir(), 'modelgate-bench-')),
    OPENAI_API_KEY: 'sk-bench',
    OPENAI_BASE_URL: `http://127.0.0.1:${upstreamPort}/v1`,
    MODELGATE_RATE_LIMIT_RPM: '100000000',
    MODELGATE_RATE_LIMIT_RPH: '1000000000',
    MODELGATE_RATE_LIMIT_BURST: '100000000',
    MODELGATE_RATE_LIMIT_TPM: '100000000000',
    MODELGATE_DAILY_COST_LIMIT: '1000000',
    MODELGATE_WEEKLY_COST_LIMIT: '1000000',
    MODELGATE_MONTHLY_COST_LIMIT: '1000000',
    // BENCH_GATEWAY_ENV='{"MODELGATE_CACHE_ENABLED":"false"}' measures the pipeline without a plugin.
    ...(JSON.parse(process.env.BENCH_GATEWAY_ENV ?? '{}') as Record<string, string>),
  };
}

/** A Redis for the benchmark's Redis-backed gateways, if one answers (REDIS_URL, or localhost:6379). */
export async function reachableRedis(): Promise<Redis | undefined> {
  const options = { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1000, retryStrategy: () => null };
  const redis = process.env.REDIS_URL ? new Redis(process.env.REDIS_URL, options) : new Redis(options);
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    return redis;
  } catch {
    redis.disconnect();
    return undefined;
  }
}

/** Deletes the keys one run wrote under its own prefix. */
export async function deleteKeys(redis: Redis, prefix: string): Promise<number> {
  let deleted = 0;
  for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1000 }) as AsyncIterable<string[]>) {
    if (keys.length > 0) deleted += await redis.del(...keys);
  }
  return deleted;
}
