// `npm run demo` keeps its simulated spend to itself: started from any folder it writes nothing
// there (no ./data a real gateway would later count against its budgets), uses a directory of its
// own under the OS temp dir, says so in its banner and removes it when stopped. A data directory or
// a database the user names is used, kept, and named in the banner.
import t, { type Test } from 'tap';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.js';
import { call } from '../helpers/gateway.js';
import { postgresEnv } from '../helpers/database.js';

/** No simulated failures or latency: the test is about where data goes. */
const QUIET = { DEMO_FAILURE_RATE: '0', DEMO_SPEED: '0' };
const hello = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello!' }] });

function emptyFolder(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-cwd-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The banner, once printed in full (it follows the "listening" log line). */
async function bannerOf(demo: GatewayProcess): Promise<string> {
  for (let i = 0; i < 250 && !demo.output().includes('Stop with Ctrl+C'); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  return demo.output();
}

function databaseOf(demo: GatewayProcess): string {
  return String(demo.logs.find((line) => line.msg === 'database ready')?.database);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  t.test(`started from an empty folder, the demo writes only to a temporary directory, removed on ${signal}`, async (t) => {
    const cwd = emptyFolder(t);
    const demo = await startGatewayProcess(QUIET, { entry: 'demo', cwd });
    const banner = await bannerOf(demo);
    const dir = dirname(databaseOf(demo));
    t.ok(dir.startsWith(join(tmpdir(), 'modelgate-demo-')), `its database is in a directory of its own under the OS temp dir (${dir})`);
    t.ok(banner.includes(`data:          ${dir} (temporary, removed when the demo stops)`), 'the banner says where data goes and that it is temporary');

    t.equal((await call(demo.url, '/chat/completions', { body: hello })).status, 200, 'a priced request was answered (spend to record)');
    t.ok(existsSync(join(dir, 'modelgate.db')), 'the database is there while the demo runs');
    t.same(readdirSync(cwd), [], 'nothing was written where the demo was started (no ./data)');

    await demo.stop(signal);
    t.match(await demo.exited, { code: 0 });
    t.notOk(existsSync(dir), 'the temporary directory is gone once the demo stopped');
    t.same(readdirSync(cwd), []);
  });
}

t.test('a MODELGATE_DATA_DIR the user sets is used, named in the banner, and kept', async (t) => {
  const cwd = emptyFolder(t);
  const mine = join(cwd, 'my-demo-data');
  const demo = await startGatewayProcess({ ...QUIET, MODELGATE_DATA_DIR: mine }, { entry: 'demo', cwd });
  const banner = await bannerOf(demo);
  t.equal(databaseOf(demo), join(mine, 'modelgate.db'));
  t.ok(banner.includes(`data:          ${mine} (MODELGATE_DATA_DIR, kept: demo spend counts against its budgets)`), 'the banner names it');
  t.equal((await call(demo.url, '/chat/completions', { body: hello })).status, 200);
  await demo.stop('SIGINT');
  t.ok(existsSync(join(mine, 'modelgate.db')), "the user's directory and its database are kept");
});

t.test('a MODELGATE_DATABASE_URL the user sets is used, and the banner says demo spend is recorded there', async (t) => {
  const cwd = emptyFolder(t);
  const demo = await startGatewayProcess({ ...QUIET, ...postgresEnv() }, { entry: 'demo', cwd });
  const banner = await bannerOf(demo);
  t.match(banner, /data: +PostgreSQL at postgres:\/\/\S+ \(schema modelgate_test_\w+\) \(MODELGATE_DATABASE_URL\)\n +demo spend is recorded there/);
  t.equal((await call(demo.url, '/chat/completions', { body: hello })).status, 200);
  await demo.stop('SIGTERM');
  t.match(await demo.exited, { code: 0 });
  t.same(readdirSync(cwd), [], 'nothing was written where the demo was started');
});
