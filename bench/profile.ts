// npm run bench:profile: where the gateway's CPU goes. Starts the benchmark's fake upstream and the
// gateway (as bench/run.ts does: every plugin on, each request unique so the cache misses) under
// `node --cpu-prof`, warms it, loads it for BENCH_DURATION_MS at 50 connections, stops it, and reads
// the V8 CPU profile of the measured window only: the top functions by self time, and the cost of
// each pipeline stage in µs per request. A stage is the nearest frame of the project's own code on
// the stack (a plugin, a core file, a provider); work the project did not call (Node's HTTP server
// and client below the project's frames, timers) is shown by the library or Node module that did it.
// BENCH_PROFILE_MODE=json (default) | stream | hit (the same request repeated: cache hits);
// BENCH_PROFILE_TARGET=passthrough profiles the bare pass-through the same way.
// A third table gives the project's functions with everything they called (BENCH_PROFILE_TOP rows, 40).
// BENCH_PROFILE_OUT keeps the .cpuprofile (open it in Chrome DevTools).
import { copyFileSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from './load.js';
import { benchBody, BENCH_KEY, cpuMs, gatewayEnv, startServer } from './servers.js';

const DURATION = Number(process.env.BENCH_DURATION_MS ?? 5000);
const WARMUP = Number(process.env.BENCH_WARMUP_MS ?? 3000);
const MODE = process.env.BENCH_PROFILE_MODE ?? 'json';
const CONNECTIONS = Number(process.env.BENCH_PROFILE_CONNECTIONS ?? 50);
/** `passthrough` profiles the bare http-proxy pass-through instead: the floor, for comparison. */
const TARGET = process.env.BENCH_PROFILE_TARGET ?? 'gateway';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

async function main() {
  const directory = mkdtempSync(join(tmpdir(), 'modelgate-profile-'));
  const upstream = startServer(['dist/bench/upstream.js']);
  const upstreamPort = await upstream.port;
  const profiling = ['--cpu-prof', `--cpu-prof-dir=${directory}`];
  const gateway =
    TARGET === 'passthrough'
      ? startServer([...profiling, 'dist/bench/passthrough.js', `http://127.0.0.1:${upstreamPort}`])
      : startServer([...profiling, 'dist/core/main.js'], gatewayEnv(upstreamPort));
  const port = await gateway.port;
  const stream = MODE === 'stream';
  const unique = benchBody(stream);
  const body = MODE === 'hit' ? () => unique(0) : unique;
  const options = { port, path: '/v1/chat/completions', headers: { authorization: `Bearer ${BENCH_KEY}` }, body, connections: CONNECTIONS };
  await load({ ...options, durationMs: WARMUP });
  // V8 stamps samples with the monotonic clock process.hrtime reads: the window is cut by it.
  const from = Number(process.hrtime.bigint() / 1000n);
  const cpuBefore = cpuMs(gateway.child.pid!);
  const result = await load({ ...options, durationMs: DURATION });
  const cpu = cpuMs(gateway.child.pid!) - cpuBefore;
  const to = Number(process.hrtime.bigint() / 1000n);
  const exited = new Promise((resolve) => gateway.child.once('exit', resolve));
  gateway.child.kill('SIGTERM');
  await exited;
  upstream.child.kill('SIGTERM');
  const file = readdirSync(directory).find((name) => name.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no CPU profile written in ${directory}`);
  if (process.env.BENCH_PROFILE_OUT) copyFileSync(join(directory, file), process.env.BENCH_PROFILE_OUT);
  const profile = JSON.parse(readFileSync(join(directory, file), 'utf8')) as CpuProfile;
  report(profile, from, to, result.requests, (cpu * 1000) / result.requests);
}

/** `file:///…/dist/core/attempt.js` → `core/attempt`; node_modules/<pkg>/… → `<pkg>`; node:… kept. */
function place(url: string): { name: string; own: boolean } {
  if (url === '') return { name: '', own: false };
  const ours = /\/(?:dist|\.builds\/[^/]+)\/((?:core|plugins|providers)\/.+)\.js$/.exec(url);
  if (ours) return { name: ours[1]!, own: true };
  const library = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (library) return { name: library[1]!, own: false };
  return { name: url.replace(/^node:(internal\/)?/, 'node:'), own: false };
}

/** The stage a plugin's helper files belong to: plugins/cache/key → plugins/cache. */
function stage(name: string): string {
  const plugin = /^plugins\/([^/]+)/.exec(name);
  if (plugin) return `plugins/${plugin[1]!.replace(/\.?$/, '')}`;
  const provider = /^providers\/([^/]+)/.exec(name);
  if (provider) return `providers/${provider[1]}`;
  return name;
}

function report(profile: CpuProfile, from: number, to: number, requests: number, processCpuUs: number) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfByFunction = new Map<string, number>();
  const byStage = new Map<string, number>();
  /** Time with the function anywhere on the stack (counted once per sample): what a call costs with everything below it. */
  const totalByFunction = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  let time = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    time += profile.timeDeltas[i] ?? 0;
    if (time < from || time > to) continue;
    const delta = profile.timeDeltas[i + 1] ?? 0;
    const node = byId.get(profile.samples[i]!)!;
    const frame = node.callFrame;
    if (frame.functionName === '(idle)') {
      idle += delta;
      continue;
    }
    busy += delta;
    const here = place(frame.url);
    const label = `${frame.functionName || '(anonymous)'} ${here.name || ''}${frame.url ? `:${frame.lineNumber + 1}` : ''}`.trim();
    selfByFunction.set(label, (selfByFunction.get(label) ?? 0) + delta);
    // The stage: the nearest project frame; else the sample's own module (Node's HTTP, a library).
    let owner: string | undefined;
    for (let id: number | undefined = node.id; id !== undefined && !owner; id = parent.get(id)) {
      const at = place(byId.get(id)!.callFrame.url);
      if (at.own) owner = stage(at.name);
    }
    const key = owner ?? (here.name || frame.functionName);
    byStage.set(key, (byStage.get(key) ?? 0) + delta);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const call = byId.get(id)!.callFrame;
      const at = place(call.url);
      if (!at.own) continue;
      const name = `${call.functionName || '(anonymous)'} ${at.name}:${call.lineNumber + 1}`;
      if (seen.has(name)) continue;
      seen.add(name);
      totalByFunction.set(name, (totalByFunction.get(name) ?? 0) + delta);
    }
  }
  const perRequest = (us: number) => (us / requests).toFixed(1);
  const share = (us: number) => `${((100 * us) / busy).toFixed(1)}%`;
  console.log(`\nmodelgate CPU profile — ${TARGET}, mode ${MODE}, ${CONNECTIONS} connections, ${requests} requests in ${((to - from) / 1e6).toFixed(1)} s`);
  console.log(`process CPU (all threads, /proc): ${processCpuUs.toFixed(0)} µs/req; main thread busy: ${perRequest(busy)} µs/req, idle ${share(idle)} of busy`);
  // V8's sampler reads wall time: a system call that wakes the upstream, pinned to the same core,
  // is charged while the core runs the upstream instead (docs/benchmarks.md, eighth round: perf's
  // cpu-clock put the gateway's writev at about the pass-through's, a fifth of what this table shows).
  console.log('busy is wall time: native calls (writev above all) include time the core ran another process; their CPU is smaller\n');
  console.log('| stage (nearest own frame) | µs/req | share |');
  console.log('|---|---|---|');
  for (const [name, us] of [...byStage].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`| ${name} | ${perRequest(us)} | ${share(us)} |`);
  console.log('\n| function (self time) | µs/req | share |');
  console.log('|---|---|---|');
  for (const [name, us] of [...selfByFunction].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`| ${name} | ${perRequest(us)} | ${share(us)} |`);
  console.log('\n| project function (inclusive: everything it called) | µs/req | share |');
  console.log('|---|---|---|');
  for (const [name, us] of [...totalByFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.BENCH_PROFILE_TOP ?? 40))) console.log(`| ${name} | ${perRequest(us)} | ${share(us)} |`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
