// npm run bench: in one run, against one fake upstream, compares the upstream called directly, a
// bare http-proxy pass-through, and the gateway with its whole pipeline (auth on; every limit,
// cache and metrics plugin active but sized not to refuse, and each request unique so the cache
// misses). At 50 and 1 connections, non-stream and stream. Reports req/s, p50/p99, added latency,
// CPU time per request of the measured process (from /proc), RSS, and the ratios; a second gateway
// on MODELGATE_STORE=redis (json, 50 connections; its keys under a prefix of its own, deleted at
// the end); the cache hit; time to first token on paced streams (bench/ttft.ts); the issue-16
// targets, met or not, and the CPU per request against the last recorded run (bench/record.ts);
// then the prompt-token estimator's CPU per KB of text (bench/tokens.ts). The load
// generator is pinned to core 0, the servers to core 1 (taskset); targets alternate A B C A B C
// after a warm-up (3 s per target and mode at 50 connections, and 3 s of cache hits on the gateway,
// before anything is measured, then 1.5 s before each measurement). BENCH_DURATION_MS (default
// 4000), BENCH_ROUNDS (default 2) and BENCH_WARMUP_MS tune it; BENCH_TTFT_REQUESTS (default 150)
// paced streams per target; the gateway on 1 and 2 workers (bench/workers.ts); BENCH_ONLY=json:50,ttft
// (any of json:50 json:1 stream:50 stream:1 ttft workers) runs only those; BENCH_RECORD=1 records a
// whole run as the new baseline.
import { spawnSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { load, nextSequence, percentile } from './load.js';
import { printEstimatorCost } from './tokens.js';
import { measureTtft, printTtft, type TtftReport } from './ttft.js';
import { benchWorkers } from './workers.js';
import { compareWithBaseline, printTargets, record, type Measured, type Stats } from './record.js';
import { BENCH_KEY, benchBody as body, cpuMs, deleteKeys, GATEWAY_NODE_FLAGS, gatewayEnv, pinned as pin, reachableRedis, rssMb, startServer as start } from './servers.js';

const DURATION = Number(process.env.BENCH_DURATION_MS ?? 4000);
const WARMUP = Math.min(1500, DURATION / 2);
const GLOBAL_WARMUP = Number(process.env.BENCH_WARMUP_MS ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const TTFT_REQUESTS = Number(process.env.BENCH_TTFT_REQUESTS ?? 150);

interface Row {
  target: string;
  connections: number;
  stream: boolean;
  requests: number;
  seconds: number;
  errors: number;
  latencies: number[];
  cpuMs: number;
  rss: number;
}

async function main() {
  // Other work on the machine inflates every number (CPU per request too): the run says how busy it was.
  const loadBefore = loadavg()[0]!;
  if (pin) spawnSync('taskset', ['-cp', '0', String(process.pid)], { stdio: 'ignore' });
  // BENCH_ONLY=json:50,ttft (or stream:1, …) runs only those.
  const only = process.env.BENCH_ONLY?.split(',');
  const runs = (name: string) => !only || only.includes(name);
  const upstream = start(['dist/bench/upstream.js']);
  const upstreamPort = await upstream.port;
  const passthrough = start(['dist/bench/passthrough.js', `http://127.0.0.1:${upstreamPort}`]);
  const gateway = start([...GATEWAY_NODE_FLAGS, 'dist/core/main.js'], gatewayEnv(upstreamPort));
  // The same gateway on Redis, for the json:50 scenario only; its keys under a prefix of this run's.
  const redis = runs('json:50') ? await reachableRedis() : undefined;
  const redisPrefix = `modelgate-bench-${process.pid}-${Date.now()}:`;
  const redisGateway = redis && start([...GATEWAY_NODE_FLAGS, 'dist/core/main.js'], { ...gatewayEnv(upstreamPort), MODELGATE_STORE: 'redis', REDIS_KEY_PREFIX: redisPrefix });
  if (runs('json:50') && !redis) console.log('Redis not reachable (REDIS_URL or localhost:6379): MODELGATE_STORE=redis not measured');
  const gatewayHeaders = { authorization: `Bearer ${BENCH_KEY}` };
  const targets = [
    { name: 'direct', port: upstreamPort, pid: upstream.child.pid!, path: '/v1/chat/completions', headers: {}, only: undefined },
    { name: 'passthrough', port: await passthrough.port, pid: passthrough.child.pid!, path: '/v1/chat/completions', headers: {}, only: undefined },
    { name: 'gateway', port: await gateway.port, pid: gateway.child.pid!, path: '/v1/chat/completions', headers: gatewayHeaders, only: undefined },
    ...(redisGateway
      ? [{ name: 'gateway-redis', port: await redisGateway.port, pid: redisGateway.child.pid!, path: '/v1/chat/completions', headers: gatewayHeaders, only: 'json:50' }]
      : []),
  ];

  const scenarios = [
    { connections: 50, stream: false },
    { connections: 1, stream: false },
    { connections: 50, stream: true },
    { connections: 1, stream: true },
  ].filter((s) => runs(`${s.stream ? 'stream' : 'json'}:${s.connections}`));
  const rows: Row[] = [];
  // Steady state first: every target is warmed (JIT, pools, caches) before any scenario is measured,
  // so the order of scenarios does not favour the ones that run later.
  for (const target of targets) {
    for (const stream of target.only ? [false] : [false, true]) {
      await load({ port: target.port, path: target.path, headers: target.headers as Record<string, string>, body: body(stream), connections: 50, durationMs: GLOBAL_WARMUP });
    }
  }
  // The cache-hit path too (serving from the cache has code of its own the JIT must reach): warmed
  // only by the hit measurement's own 1.5 s at one connection, it was measured while TurboFan was
  // still compiling it (~10% more CPU per hit than after this warm-up, docs/benchmarks.md).
  const same = body(false);
  await load({ port: targets[2]!.port, path: targets[2]!.path, headers: gatewayHeaders, body: () => same(0), connections: 50, durationMs: GLOBAL_WARMUP });
  // A hit is counted when its request has settled, just after its response ended: read once they all have.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const hitsWhileWarming = await cacheHitCount(targets[2]!.port);
  for (const scenario of scenarios) {
    const name = `${scenario.stream ? 'stream' : 'json'}:${scenario.connections}`;
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of targets.filter((t) => !t.only || t.only === name)) {
        const options = { port: target.port, path: target.path, headers: target.headers as Record<string, string>, body: body(scenario.stream), connections: scenario.connections };
        await load({ ...options, durationMs: WARMUP });
        const cpuBefore = cpuMs(target.pid);
        const result = await load({ ...options, durationMs: DURATION });
        const cpu = cpuMs(target.pid) - cpuBefore;
        let row = rows.find((r) => r.target === target.name && r.connections === scenario.connections && r.stream === scenario.stream);
        if (!row) rows.push((row = { target: target.name, ...scenario, requests: 0, seconds: 0, errors: 0, latencies: [], cpuMs: 0, rss: 0 }));
        row.requests += result.requests;
        row.seconds += result.durationMs / 1000;
        row.errors += result.errors;
        for (const ms of result.latenciesMs) row.latencies.push(ms);
        row.cpuMs += cpu;
        row.rss = rssMb(target.pid);
      }
    }
  }
  // Every measured request was unique: a hit here would mean the gateway rows mix in cache answers.
  const hitsWhileMeasuring = (await cacheHitCount(targets[2]!.port)) - hitsWhileWarming;
  const hits = await cacheHits(targets[2]!);
  let ttft: TtftReport | undefined;
  if (runs('ttft')) {
    const streamTargets = targets.filter((t) => !t.only).map(({ name, port, path, headers }) => ({ name, port, path, headers: headers as Record<string, string> }));
    ttft = await measureTtft(streamTargets, (seed) => body(true, seed)(nextSequence()), 30, TTFT_REQUESTS);
  }
  for (const child of [upstream.child, passthrough.child, gateway.child, redisGateway?.child]) child?.kill('SIGTERM');
  if (redis) {
    const deleted = await deleteKeys(redis, redisPrefix);
    console.log(`\nRedis: deleted the run's ${deleted} keys under ${redisPrefix}`);
    redis.disconnect();
  }
  const stats = report(rows);
  console.log(`machine load (1-minute average) when the run started: ${loadBefore.toFixed(1)} on ${cpus().length} cores`);
  console.log(
    `\ncache hits (the same request repeated, 1 connection): gateway p50 ${hits.p50.toFixed(3)} ms, ${hits.cpu.toFixed(0)} µs CPU/req; ` +
      `${hits.hits} of ${hits.requests} answered from the cache (modelgate_cache_hits_total)`,
  );
  console.log(`cache hits during the measurements above: ${hitsWhileMeasuring} (every request there is unique: each is a miss that stores its answer)`);
  if (hitsWhileMeasuring > 0) process.exitCode = 1;
  if (ttft) printTtft(ttft, TTFT_REQUESTS);

  const measured: Measured = { stats, loadBefore, cacheHitCpu: hits.cpu, rss: Math.max(...rows.filter((r) => r.target.startsWith('gateway')).map((r) => r.rss)), passthroughRss: Math.max(...rows.filter((r) => r.target === 'passthrough').map((r) => r.rss)), ttft };
  printTargets(measured);
  compareWithBaseline(measured);
  if (process.env.BENCH_RECORD === '1') {
    if (only) console.log('\nBENCH_RECORD ignored: only a whole run is recorded (BENCH_ONLY is set)');
    else record(measured);
  }
  // Last, on its own servers (the ones above are stopped): the gateway on 1 and 2 workers.
  if (runs('workers')) await benchWorkers();
  printEstimatorCost();
}

/** modelgate_cache_hits_total as the gateway's /metrics reports it. */
async function cacheHitCount(port: number): Promise<number> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((response) => response.text());
  return Number(/^modelgate_cache_hits_total (\d+)/m.exec(text)?.[1] ?? 0);
}

/** The gateway answering one repeated request from its cache: latency, CPU, and how many were hits. */
async function cacheHits(gateway: { port: number; pid: number; path: string; headers: Record<string, string | undefined> }) {
  const same = body(false);
  const options = { port: gateway.port, path: gateway.path, headers: gateway.headers as Record<string, string>, body: () => same(0), connections: 1 };
  const counted = () => cacheHitCount(gateway.port);
  await load({ ...options, durationMs: WARMUP });
  const cpuBefore = cpuMs(gateway.pid);
  const hitsBefore = await counted();
  const result = await load({ ...options, durationMs: DURATION });
  const cpu = ((cpuMs(gateway.pid) - cpuBefore) * 1000) / result.requests;
  const sorted = Float64Array.from(result.latenciesMs).sort();
  return { requests: result.requests, p50: percentile(sorted, 0.5), cpu, hits: (await counted()) - hitsBefore };
}

function report(rows: Row[]): Stats {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(`\nmodelgate benchmark — ${new Date().toISOString()} — node ${process.version} — ${cpus().length} × ${cpu}`);
  console.log(`${pin ? 'load generator on core 0, servers on core 1' : 'not pinned (taskset unavailable or one core)'}; ${ROUNDS} rounds × ${DURATION} ms per target, alternating\n`);
  console.log('| mode | conns | target | req/s | p50 ms | p99 ms | added p50 ms | CPU µs/req | RSS MB | errors |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  const stats: Stats = new Map();
  const key = (row: Row, target = row.target) => `${row.stream ? 'stream' : 'json'}/${row.connections}/${target}`;
  for (const row of rows) {
    const sorted = Float64Array.from(row.latencies).sort();
    const rps = row.requests / row.seconds;
    const p50 = percentile(sorted, 0.5);
    stats.set(key(row), { rps, p50, cpu: (row.cpuMs * 1000) / row.requests });
  }
  for (const row of rows) {
    const s = stats.get(key(row))!;
    const direct = stats.get(key(row, 'direct'))!;
    const sorted = Float64Array.from(row.latencies).sort();
    console.log(
      `| ${row.stream ? 'stream' : 'json'} | ${row.connections} | ${row.target} | ${s.rps.toFixed(0)} | ${s.p50.toFixed(3)} | ${percentile(sorted, 0.99).toFixed(3)} | ${row.target === 'direct' ? '—' : (s.p50 - direct.p50).toFixed(3)} | ${s.cpu.toFixed(0)} | ${row.rss.toFixed(0)} | ${row.errors} |`,
    );
  }
  console.log('\n| mode | conns | gateway/pass-through req/s | gateway/direct req/s | gateway/pass-through CPU per req | gateway added p50 − pass-through added p50 (ms) |');
  console.log('|---|---|---|---|---|---|');
  for (const stream of [false, true]) {
    for (const connections of [50, 1]) {
      const mode = stream ? 'stream' : 'json';
      if (!stats.has(`${mode}/${connections}/gateway`)) continue;
      const key = (target: string) => stats.get(`${mode}/${connections}/${target}`)!;
      const g = key('gateway');
      const p = key('passthrough');
      const d = key('direct');
      console.log(
        `| ${mode} | ${connections} | ${(g.rps / p.rps).toFixed(2)} | ${(g.rps / d.rps).toFixed(2)} | ${(g.cpu / p.cpu).toFixed(2)} | ${(g.p50 - p.p50).toFixed(3)} |`,
      );
    }
  }
  return stats;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
