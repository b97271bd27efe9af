// The start contract: `npm start` runs the compiled server and never compiles, so several
// instances started at the same moment from one checkout all come up; a missing, incomplete or
// stale dist/ stops it with one line naming `npm run build`; `npm run build` compiles into a build
// directory of its own and points dist/ at it in one rename, builds take turns, and a failed compile
// leaves the previous build in place.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { projectRoot } from '../../core/paths.js';
import { call } from '../helpers/gateway.js';
import { startGatewayProcess, runLaunch } from '../helpers/process.js';
import { testDataDir } from '../helpers/database.js';
// @ts-expect-error plain JavaScript, no declarations
import { sourceHash } from '../../scripts/build-stamp.mjs';

t.test('three instances started at the same moment from one checkout, on one data directory, all serve', async (t) => {
  const env = { MODELGATE_DATA_DIR: testDataDir() };
  const gateways = await Promise.all([1, 2, 3].map(() => startGatewayProcess(env)));
  t.teardown(() => Promise.all(gateways.map((gateway) => gateway.stop())).then(() => undefined));
  for (const gateway of gateways) {
    const health = await call(gateway.url, '/health', { key: null });
    t.equal(health.status, 200);
    t.ok(gateway.logs.some((line) => line.msg === 'database ready'));
  }
  t.equal(new Set(gateways.map((gateway) => gateway.url)).size, 3, 'on three ports');
  const warned = gateways.filter((gateway) => gateway.logs.some((line) => String(line.msg).startsWith('another gateway uses this database with the embedded store')));
  t.equal(warned.length, 2, 'the two that came second are told their budgets are not shared (embedded store)');
});

/** A checkout of its own: the launcher, one source file, and optionally a dist/. */
function miniCheckout(t: { teardown(fn: () => void): void }): string {
  const root = mkdtempSync(join(tmpdir(), 'modelgate-checkout-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'scripts'));
  for (const file of ['launch.mjs', 'build-stamp.mjs', 'build.mjs']) copyFileSync(join(projectRoot, 'scripts', file), join(root, 'scripts', file));
  writeFileSync(join(root, 'package.json'), '{"name":"mini","type":"module"}');
  writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, types: [], rootDir: '.', outDir: 'dist' } }));
  writeFileSync(join(root, 'tsconfig.build.json'), JSON.stringify({ extends: './tsconfig.json', include: ['core'] }));
  mkdirSync(join(root, 'core'));
  writeFileSync(join(root, 'core', 'main.ts'), "console.log('the server ran');\n");
  return root;
}

function fakeBuild(root: string, stamp: object | undefined): void {
  mkdirSync(join(root, 'dist', 'core'), { recursive: true });
  writeFileSync(join(root, 'dist', 'core', 'main.js'), "console.log('the server ran');\n");
  if (stamp) writeFileSync(join(root, 'dist', 'build.json'), JSON.stringify(stamp));
}

t.test('a missing, incomplete or stale dist/ is refused with one line naming npm run build; a current one runs', async (t) => {
  const root = miniCheckout(t);
  const missing = await runLaunch('server', {}, root);
  t.equal(missing.code, 1);
  t.equal(missing.stderr, 'modelgate: dist/ is missing: the gateway has not been built. Run `npm run build` (npm ci builds it too, with or without --omit=dev).\n');

  fakeBuild(root, undefined);
  const incomplete = await runLaunch('server', {}, root);
  t.equal(incomplete.code, 1);
  t.match(incomplete.stderr, /^modelgate: dist\/ is incomplete .* Run `npm run build`\.\n$/);

  writeFileSync(join(root, 'dist', 'build.json'), JSON.stringify({ sources: sourceHash(root) }));
  const current = await runLaunch('server', {}, root);
  t.equal(current.code, 0, current.stderr);
  t.equal(current.stdout, 'the server ran\n');

  writeFileSync(join(root, 'core', 'main.ts'), "console.log('edited');\n");
  const stale = await runLaunch('server', {}, root);
  t.equal(stale.code, 1);
  t.equal(stale.stderr, 'modelgate: dist/ is stale: the sources changed since it was built. Run `npm run build`.\n');
  t.equal(stale.stdout, '', 'nothing of the stale build ran');

  // A source folder that is a symbolic link is followed, as the compiler follows it.
  writeFileSync(join(root, 'core', 'main.ts'), "console.log('the server ran');\n");
  const shared = mkdtempSync(join(tmpdir(), 'modelgate-shared-'));
  t.teardown(() => rmSync(shared, { recursive: true, force: true }));
  writeFileSync(join(shared, 'helper.ts'), 'export const a = 1;\n');
  symlinkSync(shared, join(root, 'core', 'shared'), 'dir');
  writeFileSync(join(root, 'dist', 'build.json'), JSON.stringify({ sources: sourceHash(root) }));
  t.equal((await runLaunch('server', {}, root)).code, 0);
  writeFileSync(join(shared, 'helper.ts'), 'export const a = 2;\n');
  t.equal((await runLaunch('server', {}, root)).code, 1, 'an edit behind a symbolic link makes the build stale');

  // An image ships dist/ without the sources: nothing to compare, the build runs.
  rmSync(join(root, 'tsconfig.build.json'));
  t.equal((await runLaunch('server', {}, root)).code, 0);
});

t.test('npm run build swaps in a whole build; one that fails to compile leaves the previous build in place', async (t) => {
  const root = miniCheckout(t);
  symlinkSync(join(projectRoot, 'node_modules'), join(root, 'node_modules'), 'dir');
  const build = () => spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, encoding: 'utf8', env: { ...process.env, npm_lifecycle_event: 'build' } });
  t.equal(build().status, 0);
  t.equal((await runLaunch('server', {}, root)).stdout, 'the server ran\n', 'the build runs');
  const stamp = readFileSync(join(root, 'dist', 'build.json'), 'utf8');

  writeFileSync(join(root, 'core', 'main.ts'), "const broken: number = 'not a number';\n");
  const failed = build();
  t.not(failed.status, 0);
  t.match(failed.stderr, /tsc failed; dist\/ is unchanged/);
  t.equal(readFileSync(join(root, 'dist', 'build.json'), 'utf8'), stamp, 'the previous build is still there, whole');
  t.ok(existsSync(join(root, 'dist', 'core', 'main.js')), 'with its compiled files');
  t.equal((await runLaunch('server', {}, root)).code, 1, 'and is refused as stale, not run half-new');
});

t.test('two builds at once take turns; dist/ is always one whole build; the current and the previous build are kept', async (t) => {
  const root = miniCheckout(t);
  symlinkSync(join(projectRoot, 'node_modules'), join(root, 'node_modules'), 'dir');
  const build = () =>
    new Promise<number | null>((resolve) => spawn(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'ignore', env: { ...process.env, npm_lifecycle_event: 'build' } }).on('exit', resolve));
  const first = [build(), build()];
  // Launched while they run: each finds a whole build, or none yet, never half of one.
  const during: number[] = [];
  for (let i = 0; i < 20; i++) {
    const run = await runLaunch('server', {}, root);
    during.push(run.code ?? -1);
    if (run.code === 0) t.equal(run.stdout, 'the server ran\n');
    else t.match(run.stderr, /dist\/ is missing/);
  }
  t.same(await Promise.all(first), [0, 0], 'both builds succeed');
  t.equal(await build(), 0);
  t.ok(lstatSync(join(root, 'dist')).isSymbolicLink(), 'dist/ links to a build');
  t.equal((await runLaunch('server', {}, root)).stdout, 'the server ran\n');
  t.equal(readdirSync(join(root, '.builds')).filter((name) => !name.startsWith('.')).length, 2, 'the current build and the one before');
  t.notOk(existsSync(join(root, '.builds', '.lock')), 'the lock is released');
});

t.test('under `prepare`, an install without the compiler skips the build with a note instead of failing npm ci', async (t) => {
  const root = miniCheckout(t);
  const prepared = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, encoding: 'utf8', env: { ...process.env, npm_lifecycle_event: 'prepare' } });
  t.equal(prepared.status, 0);
  t.match(prepared.stderr, /TypeScript is not installed/);
  const built = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, encoding: 'utf8', env: { ...process.env, npm_lifecycle_event: 'build' } });
  t.equal(built.status, 1, 'npm run build itself fails there');
});

t.test('a port already in use stops the start with one line naming the port and MODELGATE_PORT', async (t) => {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => holder.close(() => resolve())));
  const port = (holder.address() as AddressInfo).port;
  const run = await runLaunch('server', { MODELGATE_PORT: String(port), MODELGATE_DATA_DIR: testDataDir() });
  t.equal(run.code, 1);
  t.equal(run.stderr, `modelgate: port ${port} is already in use (127.0.0.1:${port}): stop what holds it, or set MODELGATE_PORT to a free port\n`, 'one line, no stack trace');
  const demo = await runLaunch('demo', { MODELGATE_PORT: String(port) });
  t.equal(demo.code, 1, 'the demo too');
  t.equal(demo.stderr, `modelgate: port ${port} is already in use (127.0.0.1:${port}): stop what holds it, or set MODELGATE_PORT to a free port\n`);
});
