// The shape of the source tree, checked from its import graph: core at the bottom (it imports no
// plugin and no provider, except core/app.ts, which assembles the app), providers beside plugins
// (neither imports the other), no import cycles, and one layout for every provider.
import t from 'tap';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { projectRoot } from '../../core/paths.js';

/** The one core file allowed to name plugins and providers. */
const ASSEMBLY = 'core/app.ts';
const LAYERS = ['core', 'plugins', 'providers'];
/** The roles every provider folder fills, unless it speaks the shared OpenAI-compatible protocol. */
const ROLES = ['index.ts', 'request.ts', 'response.ts', 'stream.ts', 'errors.ts'];
/** Provider folders that hold shared parts, not a provider. */
const SHARED = ['shared', 'openai-compatible'];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(projectRoot, dir))) {
    const path = join(dir, name);
    if (statSync(join(projectRoot, path)).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** Relative imports of one file (static, dynamic and type-only), as project paths. */
export function importsOf(file: string, source: string): string[] {
  const specifiers = source.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g);
  return [...specifiers].map((m) => relative(projectRoot, resolve(projectRoot, dirname(file), m[1]!.replace(/\.js$/, '.ts'))));
}

function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of LAYERS.flatMap(sourceFiles)) graph.set(file, importsOf(file, readFileSync(join(projectRoot, file), 'utf8')));
  return graph;
}

/** Every import cycle, as the list of files on it (Tarjan's strongly connected components). */
export function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)!.includes(file)) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

const layerOf = (path: string) => path.split('/')[0];

t.test('core imports no plugin and no provider, except where the app is assembled', async (t) => {
  const wrong: string[] = [];
  for (const [file, targets] of importGraph()) {
    if (layerOf(file) !== 'core' || file === ASSEMBLY) continue;
    for (const target of targets) if (layerOf(target) === 'plugins' || layerOf(target) === 'providers') wrong.push(`${file} → ${target}`);
  }
  t.same(wrong, []);
});

t.test('plugins and providers do not import each other', async (t) => {
  const wrong: string[] = [];
  for (const [file, targets] of importGraph()) {
    for (const target of targets) {
      const from = layerOf(file);
      const to = layerOf(target);
      if ((from === 'plugins' && to === 'providers') || (from === 'providers' && to === 'plugins')) wrong.push(`${file} → ${target}`);
    }
  }
  t.same(wrong, []);
});

t.test('there are no import cycles', async (t) => {
  t.same(cycles(importGraph()), []);
});

t.test('the cycle finder finds a cycle, and imports are read in every form', async (t) => {
  const graph = new Map([
    ['core/a.ts', ['core/b.ts']],
    ['core/b.ts', ['core/c.ts']],
    ['core/c.ts', ['core/a.ts', 'core/d.ts']],
    ['core/d.ts', []],
  ]);
  t.same(cycles(graph), [['core/a.ts', 'core/b.ts', 'core/c.ts']]);
  const source = `import type { A } from '../providers/x.js';\nimport { b } from "./b.js";\nexport * from './c.js';\nconst d = await import('./d.js');\nimport './e.js';\nimport x from 'node:fs';`;
  t.same(importsOf('core/z.ts', source), ['providers/x.ts', 'core/b.ts', 'core/c.ts', 'core/d.ts', 'core/e.ts']);
});

t.test('every provider has one folder with the same files for the same roles', async (t) => {
  const root = join(projectRoot, 'providers');
  const loose = readdirSync(root).filter((name) => !statSync(join(root, name)).isDirectory());
  t.same(loose, [], 'no provider file outside a folder');
  for (const folder of readdirSync(root)) {
    if (SHARED.includes(folder)) continue;
    const has = (file: string) => existsSync(join(root, folder, file));
    t.ok(has('index.ts'), `providers/${folder}/index.ts`);
    const index = readFileSync(join(root, folder, 'index.ts'), 'utf8');
    // openai and custom speak the OpenAI-compatible protocol: its folder fills their roles.
    const roles = index.includes("from '../openai-compatible/index.js'") ? ROLES.filter((file) => existsSync(join(root, 'openai-compatible', file))) : ROLES.filter(has);
    t.same(roles, ROLES, `providers/${folder} fills every role`);
  }
});
