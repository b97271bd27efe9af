// What dist/ was built from. `npm run build` writes build.json into each build with a hash of the
// sources it compiled (every .ts file under tsconfig.build.json's `include`, symbolic links
// followed as tsc follows them, the two tsconfig files, and every file of the dashboard/); `npm start` compares it with the
// sources on disk before it runs anything, so it never runs a half-written, missing or stale
// build. Plain JavaScript: it runs before anything is compiled.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

export const STAMP = 'build.json';
/** Where builds live; `dist` links to the current one. */
export const BUILDS = '.builds';
const CONFIG_FILES = ['tsconfig.json', 'tsconfig.build.json'];

const DASHBOARD = 'dashboard';

function allFiles(dir, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) allFiles(path, out);
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

function tsFiles(dir, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const directory = entry.isDirectory() || (entry.isSymbolicLink() && statSync(path, { throwIfNoEntry: false })?.isDirectory());
    if (directory) tsFiles(path, out);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Whether this checkout has the sources to compare with (a Docker image ships dist/ alone). */
export function hasSources(root) {
  return existsSync(join(root, 'tsconfig.build.json'));
}

/** A hash of everything the compiler reads to build dist/. */
export function sourceHash(root) {
  const include = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')).include ?? [];
  const files = include.flatMap((dir) => (existsSync(join(root, dir)) ? tsFiles(join(root, dir), []) : []));
  files.push(...CONFIG_FILES.map((name) => join(root, name)).filter((path) => existsSync(path)));
  // The dashboard's sources, every file (pages, styles, its config), bundled into the build too.
  if (existsSync(join(root, DASHBOARD))) files.push(...allFiles(join(root, DASHBOARD), []));
  const hash = createHash('sha256');
  for (const path of files.map((file) => relative(root, file).split(sep).join('/')).sort()) {
    hash.update(path).update('\0').update(readFileSync(join(root, path))).update('\0');
  }
  return hash.digest('hex');
}

/**
 * The build `dist` points at, resolved once (a build swapped in meanwhile does not mix into this
 * one), or why it cannot be run (a sentence naming the command that fixes it).
 */
export function currentBuild(root) {
  const dist = join(root, 'dist');
  if (!existsSync(dist)) {
    return { problem: 'dist/ is missing: the gateway has not been built. Run `npm run build` (npm ci builds it too, with or without --omit=dev).' };
  }
  const dir = realpathSync(dist);
  const stampPath = join(dir, STAMP);
  if (!existsSync(stampPath)) return { problem: 'dist/ is incomplete (no build.json: a build was interrupted or predates this check). Run `npm run build`.' };
  if (!hasSources(root)) return { dir };
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(stampPath, 'utf8'));
  } catch {
    return { problem: 'dist/build.json is unreadable. Run `npm run build`.' };
  }
  if (stamp.sources !== sourceHash(root)) return { problem: 'dist/ is stale: the sources changed since it was built. Run `npm run build`.' };
  return { dir };
}
