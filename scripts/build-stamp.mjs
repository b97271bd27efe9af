// What dist/ was built from. `npm run build` writes dist/build.json with a hash of the sources it
// compiled (every .ts file under tsconfig.build.json's `include`, and the two tsconfig files);
// `npm start` compares it with the sources on disk before it runs anything, so it never runs a
// half-written, missing or stale build. Plain JavaScript: it runs before anything is compiled.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

export const STAMP = 'build.json';
const CONFIG_FILES = ['tsconfig.json', 'tsconfig.build.json'];

function tsFiles(dir, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) tsFiles(path, out);
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
  const hash = createHash('sha256');
  for (const path of files.map((file) => relative(root, file).split(sep).join('/')).sort()) {
    hash.update(path).update('\0').update(readFileSync(join(root, path))).update('\0');
  }
  return hash.digest('hex');
}

/** Why dist/ cannot be run as it is (a sentence naming the command that fixes it), or undefined. */
export function buildProblem(root) {
  const stampPath = join(root, 'dist', STAMP);
  if (!existsSync(stampPath)) {
    return existsSync(join(root, 'dist'))
      ? 'dist/ is incomplete (no dist/build.json: a build was interrupted or predates this check). Run `npm run build`.'
      : 'dist/ is missing: the gateway has not been built. Run `npm run build` (npm ci and npm install build it too).';
  }
  if (!hasSources(root)) return undefined;
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(stampPath, 'utf8'));
  } catch {
    return 'dist/build.json is unreadable. Run `npm run build`.';
  }
  if (stamp.sources !== sourceHash(root)) return 'dist/ is stale: the sources changed since it was built. Run `npm run build`.';
  return undefined;
}
