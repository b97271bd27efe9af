// Time to first token, at one connection: the same paced streams (bench/paced.ts) are asked of each
// target in turn (request i of every target has the same schedule), and the client timestamps, from
// the moment it sends the request, the read that brings each content chunk. Reported per target:
// time to the first content chunk (TTFT) and to the last one; against the direct call, request by
// request: added TTFT, added time to the last chunk, and the added delay of every content chunk.
// A chunk held back shows as a larger added delay for later chunks than for the first, and as
// several content chunks arriving in one read ("coalesced") where the upstream sent them apart.
import http from 'node:http';
import { CONTENT_CHUNKS } from './paced.js';
import { percentile, postJson } from './load.js';

export interface StreamTarget {
  name: string;
  port: number;
  path: string;
  headers: Record<string, string>;
}

interface Timing {
  /** ms after the request was sent that each content chunk arrived. */
  arrivals: number[];
  /** Content chunks that arrived in the same read as an earlier one. */
  coalesced: number;
}

const CONTENT = /"content":"[^"]/;

function timedStream(target: StreamTarget, agent: http.Agent, body: string): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    postJson(target.port, target.path, target.headers, agent, body, (res) => {
      const arrivals: number[] = [];
      let coalesced = 0;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (data: string) => {
        const now = performance.now() - t0;
        const events = (text + data).split('\n\n');
        text = events.pop()!;
        let inThisRead = 0;
        for (const event of events) {
          if (!CONTENT.test(event)) continue;
          arrivals.push(now);
          if (inThisRead++ > 0) coalesced++;
        }
      });
      res.on('end', () => {
        if (res.statusCode !== 200 || arrivals.length !== CONTENT_CHUNKS) reject(new Error(`${target.name}: status ${res.statusCode}, ${arrivals.length} content chunks`));
        else resolve({ arrivals, coalesced });
      });
    }).on('error', reject);
  });
}

export interface TtftReport {
  /** Per target: TTFT and last-chunk p50/p99 (ms), coalesced chunks. */
  targets: { name: string; ttft50: number; ttft99: number; last50: number; last99: number; coalesced: number; chunks: number }[];
  /** Per target but direct: the same, minus the direct call's, request by request. */
  added: { name: string; ttft50: number; ttft99: number; last50: number; last99: number; chunk50: number; chunk99: number; chunkMax: number }[];
}

/**
 * `warmup` then `count` paced streams per target, targets alternating request by request; the first
 * target is the direct call the others are compared to. `body(seed)` builds a request (a new one each call).
 */
export async function measureTtft(targets: StreamTarget[], body: (seed: number) => string, warmup: number, count: number): Promise<TtftReport> {
  const agents = targets.map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  const timings: Timing[][] = targets.map(() => []);
  for (let i = 0; i < warmup + count; i++) {
    for (const [t, target] of targets.entries()) {
      const timing = await timedStream(target, agents[t]!, body(i));
      if (i >= warmup) timings[t]!.push(timing);
    }
  }
  for (const agent of agents) agent.destroy();

  const p = (values: number[], q: number) => percentile(Float64Array.from(values).sort(), q);
  const report: TtftReport = { targets: [], added: [] };
  const direct = timings[0]!;
  for (const [t, target] of targets.entries()) {
    const mine = timings[t]!;
    const first = mine.map((m) => m.arrivals[0]!);
    const last = mine.map((m) => m.arrivals.at(-1)!);
    report.targets.push({
      name: target.name,
      ttft50: p(first, 0.5),
      ttft99: p(first, 0.99),
      last50: p(last, 0.5),
      last99: p(last, 0.99),
      coalesced: mine.reduce((sum, m) => sum + m.coalesced, 0),
      chunks: mine.length * CONTENT_CHUNKS,
    });
    if (t === 0) continue;
    const addedFirst = mine.map((m, i) => m.arrivals[0]! - direct[i]!.arrivals[0]!);
    const addedLast = mine.map((m, i) => m.arrivals.at(-1)! - direct[i]!.arrivals.at(-1)!);
    const addedChunk = mine.flatMap((m, i) => m.arrivals.map((at, k) => at - direct[i]!.arrivals[k]!));
    report.added.push({
      name: target.name,
      ttft50: p(addedFirst, 0.5),
      ttft99: p(addedFirst, 0.99),
      last50: p(addedLast, 0.5),
      last99: p(addedLast, 0.99),
      chunk50: p(addedChunk, 0.5),
      chunk99: p(addedChunk, 0.99),
      chunkMax: Math.max(...addedChunk),
    });
  }
  return report;
}

export function printTtft(report: TtftReport, count: number): void {
  console.log(`\ntime to first token, 1 connection, ${count} paced streams per target (${CONTENT_CHUNKS} content chunks, first after 3–6 ms, then every 1–5 ms), targets alternating:\n`);
  console.log('| target | TTFT p50 ms | TTFT p99 ms | last chunk p50 ms | last chunk p99 ms | chunks coalesced |');
  console.log('|---|---|---|---|---|---|');
  for (const t of report.targets) {
    console.log(`| ${t.name} | ${t.ttft50.toFixed(3)} | ${t.ttft99.toFixed(3)} | ${t.last50.toFixed(3)} | ${t.last99.toFixed(3)} | ${t.coalesced} of ${t.chunks} |`);
  }
  console.log('\nadded to the direct call, request by request (same schedule):\n');
  console.log('| target | added TTFT p50 ms | p99 | added to last chunk p50 ms | p99 | added per chunk p50 ms | p99 | max |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const a of report.added) {
    console.log(
      `| ${a.name} | ${a.ttft50.toFixed(3)} | ${a.ttft99.toFixed(3)} | ${a.last50.toFixed(3)} | ${a.last99.toFixed(3)} | ${a.chunk50.toFixed(3)} | ${a.chunk99.toFixed(3)} | ${a.chunkMax.toFixed(3)} |`,
    );
  }
}
