// `npm run build` (and `prepare`, which npm ci and npm install run): compiles the TypeScript into a
// fresh directory, stamps it with the hash of the sources it was compiled from (build-stamp.mjs),
// and only then swaps it in for dist/ — two renames, so a gateway starting at that moment finds a
// whole build, the old or the new, never a half-written one. Under `prepare` a checkout without the
// compiler (npm ci --omit=dev) or without sources (a Docker layer that installs before copying
// them) is skipped with a note; `npm run build` there fails.
import { spawnSync } from 'node:child_process';
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { STAMP, hasSources, sourceHash } from './build-stamp.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const preparing = process.env.npm_lifecycle_event === 'prepare';

function stop(message, status) {
  console.error(`modelgate build: ${message}`);
  process.exit(status);
}

if (!hasSources(root)) stop('no sources here (tsconfig.build.json is missing): nothing to build', preparing ? 0 : 1);
let tsc;
try {
  tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
} catch {
  stop('TypeScript is not installed (a production install?): install the dev dependencies (npm ci) to build', preparing ? 0 : 1);
}

const before = sourceHash(root);
const staging = join(root, `.dist-build-${process.pid}`);
rmSync(staging, { recursive: true, force: true });
const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', staging], { cwd: root, stdio: 'inherit' });
if (compiled.status !== 0) {
  rmSync(staging, { recursive: true, force: true });
  stop('tsc failed; dist/ is unchanged', compiled.status ?? 1);
}
if (sourceHash(root) !== before) {
  rmSync(staging, { recursive: true, force: true });
  stop('the sources changed while they were compiled; dist/ is unchanged: run it again', 1);
}
writeFileSync(join(staging, STAMP), `${JSON.stringify({ sources: before, builtAt: new Date().toISOString(), node: process.version }, null, 2)}\n`);

const dist = join(root, 'dist');
const retired = join(root, `.dist-old-${process.pid}`);
if (existsSync(dist)) renameSync(dist, retired);
renameSync(staging, dist);
rmSync(retired, { recursive: true, force: true });
