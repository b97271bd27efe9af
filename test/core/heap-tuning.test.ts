// The gateway's heap setting (core/heap-tuning.ts), observed in a child process: V8 reports its
// pretenuring decisions (--trace-pretenuring-statistics). A workload whose literal objects all
// survive young-generation collections gets its allocation site tenured by default; once the
// module is imported no site is. And the entry points import it before anything else.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const tuning = pathToFileURL(join(import.meta.dirname, '../../core/heap-tuning.ts')).href;

// Object literals from two sites, every one kept: each scavenge finds them all alive. (One site and
// 3 million objects drew 0–3 tenure decisions by default; two sites and 6 million draw 4–6.)
const workload = `
  const kept = [];
  for (let round = 0; round < 4; round++) {
    for (let i = 0; i < 1_500_000; i++) kept.push(round % 2 ? { id: i, name: 'request', done: false } : { at: i, kind: 'row', ok: true });
  }
  console.log('kept', kept.length);
`;

function tenuredSites(tune: boolean): { tenured: number; output: string } {
  const script = tune ? `import(${JSON.stringify(tuning)}).then(() => { ${workload} });` : workload;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--trace-pretenuring-statistics', '--input-type=module', '-e', script], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const output = run.stdout + run.stderr;
  return { tenured: output.split('\n').filter((line) => /=> tenure\b/.test(line)).length, output };
}

t.test('by default V8 tenures a literal whose objects survive (the control)', async (t) => {
  const { tenured, output } = tenuredSites(false);
  t.match(output, /kept 6000000/);
  t.ok(tenured > 0, `tenure decisions: ${tenured}`);
});

t.test('importing core/heap-tuning turns allocation-site pretenuring off: no site is tenured', async (t) => {
  const { tenured, output } = tenuredSites(true);
  t.match(output, /kept 6000000/);
  t.equal(tenured, 0);
});

t.test('the gateway and the demo import it first, before any module with startup code of its own', async (t) => {
  for (const [file, specifier] of [
    ['../../core/main.ts', './heap-tuning.js'],
    ['../../demo/main.ts', '../core/heap-tuning.js'],
  ] as const) {
    const firstImport = readFileSync(join(import.meta.dirname, file), 'utf8')
      .split('\n')
      .find((line) => line.startsWith('import '));
    t.equal(firstImport, `import '${specifier}';`, file);
  }
});
