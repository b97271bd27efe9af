// A production install (`npm ci --omit=dev`) builds and starts, and the container's health probe
// finds the gateway where MODELGATE_HOST and MODELGATE_PORT say it listens. The install is
// simulated without the network: a copy of the checkout whose node_modules holds only the packages
// package-lock.json does not mark as dev-only (linked from this checkout's install).
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { projectRoot } from '../../core/paths.js';
import { startGatewayProcess } from '../helpers/process.js';
import { testDataDir } from '../helpers/database.js';
// @ts-expect-error plain JavaScript, no declarations
import { healthUrl } from '../../scripts/health-url.mjs';

interface LockEntry {
  dev?: boolean;
}

/** A copy of the checkout's files with a production node_modules: every package not marked dev. */
function productionCheckout(t: { teardown(fn: () => void): void }): string {
  const root = mkdtempSync(join(tmpdir(), 'modelgate-prod-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const files = spawnSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: projectRoot, encoding: 'utf8' }).stdout.split('\0').filter(Boolean);
  for (const file of files) {
    if (!existsSync(join(projectRoot, file))) continue; // deleted in the working tree
    mkdirSync(dirname(join(root, file)), { recursive: true });
    cpSync(join(projectRoot, file), join(root, file));
  }
  const lock = JSON.parse(readFileSync(join(projectRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  for (const [path, entry] of Object.entries(lock.packages)) {
    // Top-level packages only: nested ones come inside their parent's folder.
    if (!path.startsWith('node_modules/') || path.indexOf('/node_modules/') !== -1 || entry.dev) continue;
    mkdirSync(dirname(join(root, path)), { recursive: true });
    symlinkSync(join(projectRoot, path), join(root, path), 'dir');
  }
  return root;
}

const probe = (env: Record<string, string>, root: string) =>
  spawnSync(process.execPath, [join(root, 'scripts', 'healthcheck.mjs')], { cwd: root, encoding: 'utf8', env: { PATH: process.env.PATH, ...env } });

t.test('npm ci --omit=dev builds (prepare) and the gateway starts; the health probe follows the settings', async (t) => {
  const root = productionCheckout(t);
  t.notOk(existsSync(join(root, 'node_modules', 'tap')), 'dev dependencies are absent');
  const prepared = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, encoding: 'utf8', env: { ...process.env, npm_lifecycle_event: 'prepare' } });
  t.equal(prepared.status, 0, prepared.stderr);
  t.ok(existsSync(join(root, 'dist', 'core', 'main.js')), 'prepare built dist/');

  const gateway = await startGatewayProcess({ MODELGATE_DATA_DIR: testDataDir(), MODELGATE_HOST: '0.0.0.0' }, { root });
  t.teardown(() => gateway.stop());
  const port = new URL(gateway.url).port;
  t.equal(probe({ MODELGATE_PORT: port, MODELGATE_HOST: '0.0.0.0' }, root).status, 0, 'a wildcard host is probed on loopback');
  t.equal(probe({ MODELGATE_PORT: port, MODELGATE_HOST: '127.0.0.1' }, root).status, 0, 'the configured host');
  await gateway.stop();
  const stopped = probe({ MODELGATE_PORT: port, MODELGATE_HOST: '0.0.0.0' }, root);
  t.equal(stopped.status, 1, 'a stopped gateway is unhealthy');
  t.equal(stopped.stderr, `modelgate healthcheck: http://127.0.0.1:${port}/v1/health: ECONNREFUSED\n`, 'saying why, in one line');
});

t.test('the health probe URL for each way of setting host and port', async (t) => {
  t.same(healthUrl({}), { url: 'http://127.0.0.1:3000/v1/health' }, 'the defaults');
  t.same(healthUrl({ MODELGATE_PORT: '8080', MODELGATE_HOST: '::' }), { url: 'http://[::1]:8080/v1/health' });
  t.same(healthUrl({ MODELGATE_PORT: ' ', MODELGATE_HOST: '10.1.2.3' }), { url: 'http://10.1.2.3:3000/v1/health' }, 'empty is unset, as for the server');
  t.same(healthUrl({ MODELGATE_HOST: 'fd00::5' }), { url: 'http://[fd00::5]:3000/v1/health' });
  t.match(healthUrl({ MODELGATE_PORT: '0' }), { problem: /MODELGATE_PORT=0/ }, 'port 0 is chosen at start: nothing to probe');
});
