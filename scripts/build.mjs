// `npm run build` (and `prepare`, which npm ci and npm install run): compiles the TypeScript into a
// build directory of its own under .builds/, stamps it with the hash of the sources it was compiled
// from (build-stamp.mjs), and only then points `dist` at it — `dist` is a symbolic link, replaced
// by one rename, so a gateway starting at any moment finds one whole build, the old or the new
// (the launcher resolves the link once and loads every module from that build). Builds take turns
// (a lock file; one left by a build that died is taken over). The current and the previous build
// are kept, for gateways still running from it. Under `prepare` a checkout without the compiler
// or without sources (a Docker layer that installs before copying them) is
// skipped with a note; `npm run build` there fails.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, lstatSync, mkdirSync, openSync, readFileSync, readdirSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BUILDS, STAMP, hasSources, sourceHash } from './build-stamp.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const preparing = process.env.npm_lifecycle_event === 'prepare';
const builds = join(root, BUILDS);
const lock = join(builds, '.lock');
const LOCK_WAIT_MS = 5 * 60_000;

function stop(message, status) {
  console.error(`modelgate build: ${message}`);
  process.exit(status);
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Takes the build lock, waiting for a build in progress; a lock whose holder is gone is taken over. */
async function takeLock() {
  mkdirSync(builds, { recursive: true });
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let announced = false; ; ) {
    try {
      const fd = openSync(lock, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
    const holder = Number(readFileSync(lock, 'utf8').trim());
    if (!holder || !alive(holder)) {
      rmSync(lock, { force: true });
      continue;
    }
    if (Date.now() > deadline) stop(`another build (pid ${holder}) has held ${lock} for ${LOCK_WAIT_MS / 60_000} minutes`, 1);
    if (!announced) console.error(`modelgate build: waiting for the build in progress (pid ${holder})`);
    announced = true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Removes builds other than the current and the previous one, and any left half-done. */
function prune(current) {
  const complete = readdirSync(builds)
    .filter((name) => !name.startsWith('.') && name !== current)
    .map((name) => ({ name, stamped: existsSync(join(builds, name, STAMP)) }));
  const previous = complete.filter((build) => build.stamped).map((build) => build.name).sort().at(-1);
  for (const { name } of complete) if (name !== previous) rmSync(join(builds, name), { recursive: true, force: true });
  // Directories of the layout before builds were kept under .builds/.
  for (const name of readdirSync(root)) if (/^\.dist-(build|old)-\d+$/.test(name)) rmSync(join(root, name), { recursive: true, force: true });
}

/**
 * The dashboard (dashboard/): type-checked, then bundled by Vite into the build's dashboard/ folder,
 * which plugins/dashboard.ts serves at /dashboard. Whether it built; a checkout without it builds the
 * gateway alone (then /dashboard answers 503 dashboard_not_built).
 */
function buildDashboard(staging, tsc) {
  const dir = join(root, 'dashboard');
  if (!existsSync(join(dir, 'vite.config.ts'))) return true;
  if (spawnSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { cwd: root, stdio: 'inherit' }).status !== 0) return false;
  const vite = join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  const args = ['build', '--config', join(dir, 'vite.config.ts'), '--outDir', join(staging, 'dashboard'), '--logLevel', 'warn'];
  return spawnSync(process.execPath, [vite, ...args], { cwd: root, stdio: 'inherit' }).status === 0;
}

/**
 * The built dashboard's brotli and gzip forms, written beside its files by the gateway's own code
 * (just compiled into the build), so a gateway reads them at boot rather than compressing each time.
 */
async function precompressDashboard(staging) {
  const dir = join(staging, 'dashboard');
  if (!existsSync(dir)) return;
  const { precompress } = await import(pathToFileURL(join(staging, 'plugins', 'dashboard', 'static-files.js')).href);
  precompress(dir);
}

if (!hasSources(root)) stop('no sources here (tsconfig.build.json is missing): nothing to build', preparing ? 0 : 1);
let tsc;
try {
  tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
} catch {
  stop('TypeScript is not installed: run `npm ci` (with or without --omit=dev; the compiler is a dependency)', preparing ? 0 : 1);
}

await takeLock();
try {
  const before = sourceHash(root);
  // Named by time, so the newest sorts last.
  const name = `${new Date().toISOString().replace(/[-:.]/g, '')}-${process.pid}`;
  const staging = join(builds, name);
  const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', staging], { cwd: root, stdio: 'inherit' });
  if (compiled.status !== 0) {
    rmSync(staging, { recursive: true, force: true });
    stop('tsc failed; dist/ is unchanged', compiled.status ?? 1);
  }
  const dashboardBuilt = buildDashboard(staging, tsc);
  if (!dashboardBuilt) {
    rmSync(staging, { recursive: true, force: true });
    stop('the dashboard did not build; dist/ is unchanged', 1);
  }
  await precompressDashboard(staging);
  if (sourceHash(root) !== before) {
    rmSync(staging, { recursive: true, force: true });
    stop('the sources changed while they were compiled; dist/ is unchanged: run it again', 1);
  }
  writeFileSync(join(staging, STAMP), `${JSON.stringify({ sources: before, builtAt: new Date().toISOString(), node: process.version }, null, 2)}\n`);

  const dist = join(root, 'dist');
  // dist/ as a plain directory (before builds were kept under .builds/) makes way once.
  if (existsSync(dist) && !lstatSync(dist).isSymbolicLink()) rmSync(dist, { recursive: true, force: true });
  const link = join(root, `.dist-link-${process.pid}`);
  rmSync(link, { force: true });
  symlinkSync(join(BUILDS, name), link, 'dir');
  renameSync(link, dist);
  prune(basename(readlinkSync(dist)));
} finally {
  rmSync(lock, { force: true });
}
