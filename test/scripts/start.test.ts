// The start contract: `npm start` runs the compiled server and never compiles, so several
// instances started at the same moment from one checkout all come up; a missing, incomplete or
// stale dist/ stops it with one line naming `npm run build`; `npm run build` compiles into a fresh
// directory and swaps it in whole, so a failed compile leaves the previous build running.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  t.equal(missing.stderr, 'modelgate: dist/ is missing: the gateway has not been built. Run `npm run build` (npm ci and npm install build it too).\n');

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

t.test('under `prepare`, a production install without the compiler skips the build with a note instead of failing npm ci', async (t) => {
  const root = miniCheckout(t);
  const prepared = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, encoding: 'utf8', env: { ...process.env, npm_lifecycle_event: 'prepare' } });
  t.equal(prepared.status, 0);
  t.match(prepared.stderr, /TypeScript is not installed/);
  const built = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, encoding: 'utf8', env: { ...process.env, npm_lifecycle_event: 'build' } });
  t.equal(built.status, 1, 'npm run build itself fails there');
});
