// The run against issue 16's targets, and against the last recorded run: the targets table (measure,
// value, target, met?), a REGRESSION line for every scenario whose gateway CPU per request is more
// than 15% above bench/baseline.json's, and with BENCH_RECORD=1 the run becomes the new baseline
// and a row of docs/benchmarks.md's run log (commit from `git rev-parse --short HEAD`).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../core/paths.js';
import type { TtftReport } from './ttft.js';

/** Per scenario and target ("json/50/gateway"): req/s, p50 ms, CPU µs per request. */
export type Stats = Map<string, { rps: number; p50: number; cpu: number }>;

export interface Measured {
  stats: Stats;
  /** The machine's 1-minute load average when the run started. */
  loadBefore: number;
  cacheHitCpu: number;
  /** The gateways' largest RSS after a measurement, MB. */
  rss: number;
  /** The bare pass-through's largest RSS after a measurement, MB: the floor of the RSS target. */
  passthroughRss: number;
  ttft: TtftReport | undefined;
}

interface Baseline {
  commit: string;
  date: string;
  node: string;
  /** The machine's 1-minute load average when the run started. */
  load: number;
  /** Gateway CPU µs per request, by scenario. */
  cpu: Record<string, number>;
}

const BASELINE = join(projectRoot, 'bench/baseline.json');
const LOG = join(projectRoot, 'docs/benchmarks.md');
const LOG_HEADING = '## Run log';
/** CPU per request more than this above the baseline's is called out. */
const REGRESSION = 0.15;

/** Gateway CPU µs per request by scenario, as recorded in the baseline. */
function cpuByScenario(m: Measured): Record<string, number> {
  const cpu: Record<string, number> = {};
  for (const [key, name] of [
    ['json/50/gateway', 'json-50'],
    ['json/1/gateway', 'json-1'],
    ['stream/50/gateway', 'stream-50'],
    ['stream/1/gateway', 'stream-1'],
    ['json/50/gateway-redis', 'redis-json-50'],
  ] as const) {
    const s = m.stats.get(key);
    if (s) cpu[name] = Math.round(s.cpu);
  }
  cpu['cache-hit'] = Math.round(m.cacheHitCpu);
  return cpu;
}

const ratio = (m: Measured, mode: string, target: string, base: string) => {
  const a = m.stats.get(`${mode}/${target}`);
  const b = m.stats.get(`${mode}/${base}`);
  return a && b ? a.rps / b.rps : undefined;
};

function ttftAdded(m: Measured, target = 'gateway') {
  return m.ttft?.added.find((a) => a.name === target);
}

function coalesced(m: Measured, target = 'gateway') {
  return m.ttft?.targets.find((t) => t.name === target);
}

/**
 * A target's measure: value, target, met?, format; the same measure of the bare reference in this
 * run, where one exists; and what each is followed by in the table (a p99, a count).
 */
type TargetRow = [measure: string, value: number | undefined, target: string, met: (v: number) => boolean, format: (v: number) => string, floor?: number, notes?: { value?: string; floor?: string }];

export function printTargets(m: Measured): void {
  const gw = (key: string) => m.stats.get(key);
  const miss = gw('json/1/gateway')?.cpu ?? gw('json/50/gateway')?.cpu;
  const jsonRatio = ratio(m, 'json/50', 'gateway', 'passthrough');
  const streamRatio = ratio(m, 'stream/50', 'gateway', 'passthrough');
  const added1 = gw('json/1/gateway') && gw('json/1/direct') ? gw('json/1/gateway')!.p50 - gw('json/1/direct')!.p50 : undefined;
  const redis = gw('json/50/gateway-redis') && gw('json/50/gateway') ? gw('json/50/gateway-redis')!.cpu / gw('json/50/gateway')!.cpu : undefined;
  const ttft = ttftAdded(m);
  const held = coalesced(m);
  const heldFloor = coalesced(m, 'passthrough');
  const ttftFloor = ttftAdded(m, 'passthrough');
  const addedFloor = gw('json/1/passthrough') && gw('json/1/direct') ? gw('json/1/passthrough')!.p50 - gw('json/1/direct')!.p50 : undefined;
  // The floor column: the same measure of the least a Node server does on this machine in this run.
  // CPU of a miss, a stream, latency, first token, RSS: the bare http-proxy pass-through (no
  // parsing, no pipeline). A cache hit: the fake upstream answering the same request directly, a
  // bare node:http server writing a stored completion (1 connection, as the hit is measured).
  const rows: TargetRow[] = [
    ['full pipeline req/s ÷ bare http-proxy req/s (json, 50 conns)', jsonRatio, '≥ 0.5 (stretch 0.7)', (v) => v >= 0.5, (v) => `${v.toFixed(2)}${v >= 0.7 ? ' (stretch met)' : ''}`],
    ['server CPU per request, cache miss (json, 50 conns)', gw('json/50/gateway')?.cpu, '≤ 160 µs', (v) => v <= 160, (v) => `${v.toFixed(0)} µs`, gw('json/50/passthrough')?.cpu],
    ['server CPU per request, cache hit (1 conn)', m.cacheHitCpu, '≤ 60 µs', (v) => v <= 60, (v) => `${v.toFixed(0)} µs`, gw('json/1/direct')?.cpu],
    ['cache miss CPU ÷ cache hit CPU (1 conn)', miss === undefined ? undefined : miss / m.cacheHitCpu, '≥ 3×', (v) => v >= 3, (v) => `${v.toFixed(2)}×`],
    ['added latency p50 at 1 conn (json)', added1, '≤ 0.25 ms', (v) => v <= 0.25, (v) => `${v.toFixed(3)} ms`, addedFloor],
    ['gateway RSS under load', Number.isFinite(m.rss) ? m.rss : undefined, '≤ 120 MB', (v) => v <= 120, (v) => `${v.toFixed(0)} MB`, Number.isFinite(m.passthroughRss) ? m.passthroughRss : undefined],
    ['streams (20 chunks), CPU per request (50 conns)', gw('stream/50/gateway')?.cpu, '≤ 300 µs', (v) => v <= 300, (v) => `${v.toFixed(0)} µs`, gw('stream/50/passthrough')?.cpu],
    ['streams, req/s ÷ bare pass-through (50 conns)', streamRatio, '≥ 0.5', (v) => v >= 0.5, (v) => v.toFixed(2)],
    ['streams: added time to first token, p50 at 1 conn', ttft?.ttft50, '≤ 0.3 ms', (v) => v <= 0.3, (v) => `${v.toFixed(3)} ms`, ttftFloor?.ttft50, { value: ttft && ` (p99 ${ttft.ttft99.toFixed(3)})`, floor: ttftFloor && ` (p99 ${ttftFloor.ttft99.toFixed(3)})` }],
    ['streams: chunks held back (arrived coalesced at the client)', held && held.coalesced / held.chunks, '≤ 1% (none held back)', (v) => v <= 0.01, (v) => `${(v * 100).toFixed(1)}%`, heldFloor && heldFloor.coalesced / heldFloor.chunks, { value: held && ` (${held.coalesced} of ${held.chunks})`, floor: heldFloor && ` (${heldFloor.coalesced} of ${heldFloor.chunks})` }],
    ['MODELGATE_STORE=redis CPU per request ÷ embedded (json, 50 conns)', redis, '≤ 1.3', (v) => v <= 1.3, (v) => v.toFixed(2)],
  ];
  console.log('\nissue 16 targets (floor: the bare reference in this run, see bench/record.ts):\n');
  console.log('| measure | value | target | met? | floor | floor within target? |');
  console.log('|---|---|---|---|---|---|');
  for (const [measure, value, target, met, format, floor, notes] of rows) {
    const floorCells = floor === undefined || !Number.isFinite(floor) ? '— | —' : `${format(floor)}${notes?.floor ?? ''} | ${met(floor) ? 'yes' : 'NO: out of reach here'}`;
    if (value === undefined || !Number.isFinite(value)) console.log(`| ${measure} | not measured | ${target} | — | ${floorCells} |`);
    else console.log(`| ${measure} | ${format(value)}${notes?.value ?? ''} | ${target} | ${met(value) ? 'met' : 'NOT MET'} | ${floorCells} |`);
  }
  // The CPU targets are absolute µs, set on a machine where the pass-through took 75–100 µs: the floor
  // this machine gives any Node proxy says how far they are reachable here.
  const floor = gw('json/50/passthrough')?.cpu;
  const floorStream = gw('stream/50/passthrough')?.cpu;
  if (floor !== undefined) {
    console.log(`
the bare pass-through alone on this machine (50 conns): ${floor.toFixed(0)} µs per request (json)${floorStream === undefined ? '' : `, ${floorStream.toFixed(0)} µs (stream)`}; gateway ÷ pass-through CPU: ${(gw('json/50/gateway')!.cpu / floor).toFixed(2)}× (json)${floorStream === undefined || !gw('stream/50/gateway') ? '' : `, ${(gw('stream/50/gateway')!.cpu / floorStream).toFixed(2)}× (stream)`}`);
  }
}

function readBaseline(): Baseline | undefined {
  return existsSync(BASELINE) ? (JSON.parse(readFileSync(BASELINE, 'utf8')) as Baseline) : undefined;
}

/** Prints each scenario's CPU per request against the baseline's; REGRESSION past +15%. */
export function compareWithBaseline(m: Measured): void {
  const baseline = readBaseline();
  if (!baseline) return console.log('\nno bench/baseline.json: nothing to compare with (BENCH_RECORD=1 records this run)');
  const now = cpuByScenario(m);
  const changes: string[] = [];
  console.log(`\ngateway CPU per request against the recorded run ${baseline.commit} (${baseline.date}, machine load ${baseline.load} then, ${m.loadBefore.toFixed(1)} now):`);
  for (const [scenario, before] of Object.entries(baseline.cpu)) {
    const after = now[scenario];
    if (after === undefined) continue;
    const change = (after - before) / before;
    const line = `${scenario} CPU ${change >= 0 ? '+' : ''}${(change * 100).toFixed(1)}% vs ${baseline.commit} (${before} → ${after} µs/req)`;
    if (change > REGRESSION) console.log(`REGRESSION: ${line}`);
    else changes.push(line);
  }
  for (const line of changes) console.log(`  ${line}`);
}

const git = (...args: string[]) => execFileSync('git', args, { cwd: projectRoot, encoding: 'utf8' }).trim();

/** The run becomes bench/baseline.json and a row of the run log in docs/benchmarks.md. */
export function record(m: Measured): void {
  const commit = git('rev-parse', '--short', 'HEAD') + (git('status', '--porcelain', '--untracked-files=no') === '' ? '' : '+uncommitted');
  const date = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const cpu = cpuByScenario(m);
  writeFileSync(BASELINE, `${JSON.stringify({ commit, date, node: process.version, load: Number(m.loadBefore.toFixed(1)), cpu } satisfies Baseline, null, 2)}\n`);

  const withRatio = (scenario: string, mode: string) => {
    const r = ratio(m, mode, 'gateway', 'passthrough');
    return cpu[scenario] === undefined ? '—' : `${cpu[scenario]}${r === undefined ? '' : ` (${r.toFixed(2)}×)`}`;
  };
  const redis = cpu['redis-json-50'] && cpu['json-50'] ? (cpu['redis-json-50'] / cpu['json-50']).toFixed(2) : '—';
  const ttft = ttftAdded(m);
  const row = `| ${date} | ${commit} | ${withRatio('json-50', 'json/50')} | ${withRatio('json-1', 'json/1')} | ${withRatio('stream-50', 'stream/50')} | ${withRatio('stream-1', 'stream/1')} | ${cpu['cache-hit']} | ${redis} | ${ttft ? `${ttft.ttft50.toFixed(3)} / ${ttft.ttft99.toFixed(3)}` : '—'} | ${m.rss.toFixed(0)} | ${m.loadBefore.toFixed(1)} |`;
  const lines = readFileSync(LOG, 'utf8').split('\n');
  const heading = lines.indexOf(LOG_HEADING);
  if (heading === -1) throw new Error(`docs/benchmarks.md has no "${LOG_HEADING}" section`);
  let end = lines.findIndex((line, i) => i > heading && line.startsWith('|'));
  if (end === -1) throw new Error(`docs/benchmarks.md's "${LOG_HEADING}" has no table`);
  while (lines[end]?.startsWith('|')) end++;
  lines.splice(end, 0, row);
  writeFileSync(LOG, lines.join('\n'));
  console.log(`\nrecorded: bench/baseline.json and a row of docs/benchmarks.md's run log (${commit})`);
}
