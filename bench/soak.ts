// npm run bench:soak: does the gateway's RSS stay within its memory cache's setting plus a constant?
// Starts the fake upstream and the gateway (as bench/run.ts does: auth on, every plugin active and
// sized not to refuse) with MODELGATE_CACHE_MAX_SIZE=SOAK_CACHE_MB (default 20), sends unique
// requests (each a miss that stores its answer) on 50 connections for SOAK_DURATION_MS (default
// 60 s), and prints RSS every SOAK_SAMPLE_MS (default 5 s) with the cache's size and entries from
// /metrics. The limit is the empty gateway's RSS (booted, before any request) + the setting +
// SOAK_CONSTANT_MB (default 80: the gateway's own working set under this load, measured with the
// cache off, docs/cache.md). Judged on the settled RSS (the median of the last third of the
// samples); the peak is printed too. Exit status 1 when the settled RSS is above the limit.
import { spawnSync } from 'node:child_process';
import { load } from './load.js';
import { BENCH_KEY, benchBody, GATEWAY_NODE_FLAGS, gatewayEnv, pinned as pin, rssMb, startServer as start } from './servers.js';

const CACHE_MB = Number(process.env.SOAK_CACHE_MB ?? 20);
const DURATION = Number(process.env.SOAK_DURATION_MS ?? 60_000);
const SAMPLE = Number(process.env.SOAK_SAMPLE_MS ?? 5000);
const CONSTANT_MB = Number(process.env.SOAK_CONSTANT_MB ?? 80);
const STREAM = process.env.SOAK_STREAM === 'true';
const body = benchBody(STREAM);

async function cacheMetrics(port: number): Promise<{ bytes: number; entries: number; evictions: number }> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((response) => response.text());
  const value = (name: string) => Number(new RegExp(`^modelgate_${name}(?:\\{[^}]*\\})? (\\S+)`, 'm').exec(text)?.[1] ?? NaN);
  return { bytes: value('cache_size_bytes'), entries: value('cache_entries'), evictions: value('cache_evictions_total') };
}

async function main() {
  if (pin) spawnSync('taskset', ['-cp', '0', String(process.pid)], { stdio: 'ignore' });
  const upstream = start(['dist/bench/upstream.js']);
  const upstreamPort = await upstream.port;
  const gateway = start([...GATEWAY_NODE_FLAGS, 'dist/core/main.js'], { ...gatewayEnv(upstreamPort), MODELGATE_CACHE_MAX_SIZE: String(CACHE_MB) });
  const port = await gateway.port;
  const pid = gateway.child.pid!;
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const empty = rssMb(pid);
  const limit = empty + CACHE_MB + CONSTANT_MB;
  console.log(`\nmodelgate soak — ${new Date().toISOString()} — node ${process.version} — ${STREAM ? 'stream' : 'json'}, 50 connections, unique requests, ${DURATION / 1000} s`);
  console.log(`MODELGATE_CACHE_MAX_SIZE=${CACHE_MB}; empty gateway RSS ${empty.toFixed(0)} MB; limit = empty + setting + ${CONSTANT_MB} MB = ${limit.toFixed(0)} MB\n`);
  console.log('| s | RSS MB | above empty MB | req/s | cache MB (charged) | entries | evictions |');
  console.log('|---|---|---|---|---|---|---|');
  const samples: number[] = [];
  let sent = 0;
  const started = Date.now();
  while (Date.now() - started < DURATION) {
    const result = await load({ port, path: '/v1/chat/completions', headers: { authorization: `Bearer ${BENCH_KEY}` }, body, connections: 50, durationMs: SAMPLE });
    sent += result.requests + result.errors;
    const rss = rssMb(pid);
    samples.push(rss);
    const cache = await cacheMetrics(port);
    console.log(
      `| ${((Date.now() - started) / 1000).toFixed(0)} | ${rss.toFixed(0)} | ${(rss - empty).toFixed(0)} | ${(result.requests / (result.durationMs / 1000)).toFixed(0)} | ${(cache.bytes / 1048576).toFixed(1)} | ${cache.entries} | ${cache.evictions} |` +
        (result.errors ? ` ${result.errors} errors` : ''),
    );
  }
  for (const child of [upstream.child, gateway.child]) child.kill('SIGTERM');
  const last = samples.slice(-Math.max(1, Math.floor(samples.length / 3))).sort((a, b) => a - b);
  const settled = last[Math.floor(last.length / 2)]!;
  const peak = Math.max(...samples);
  const within = settled <= limit;
  console.log(
    `\n${sent} requests; settled RSS ${settled.toFixed(0)} MB = empty + ${(settled - empty).toFixed(0)} MB (peak ${peak.toFixed(0)}): ` +
      `${within ? 'within' : 'ABOVE'} the limit of ${limit.toFixed(0)} MB (empty + setting ${CACHE_MB} + constant ${CONSTANT_MB})`,
  );
  if (!within) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
