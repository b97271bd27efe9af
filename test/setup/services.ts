// Runs once before the test files (tap's `before`): the real servers the tests use must answer.
// If nothing answers PING on 127.0.0.1:6379, a throwaway redis-server is started there (no
// persistence); if PostgreSQL does not answer at MODELGATE_TEST_DATABASE_URL (default
// postgres://postgres@127.0.0.1:5432/test), the machine's cluster is started (pg_ctlcluster, as the
// machine's own boot does). Either failing stops the run with a message saying what is missing.
// Schemas that test files killed by a timeout left behind are dropped. The browser tests' Chromium
// (Debian's package, at /usr/bin/chromium) is installed when it is missing.
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import pg from 'pg';
import { REDIS_HOST, REDIS_PORT, answersPing } from '../helpers/redis.js';
import { postgresProblem, TEST_DATABASE_URL } from '../helpers/database.js';
import { CHROMIUM } from '../helpers/browser.js';

async function waitFor(check: () => Promise<boolean>, tries = 100): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

if (!(await answersPing())) {
  console.error(`# no Redis on ${REDIS_HOST}:${REDIS_PORT}: starting redis-server`);
  const started = spawnSync('redis-server', ['--daemonize', 'yes', '--bind', REDIS_HOST, '--port', String(REDIS_PORT), '--save', '', '--appendonly', 'no'], {
    stdio: 'inherit',
  });
  if (started.error || started.status !== 0 || !(await waitFor(() => answersPing(), 50))) {
    console.error('# could not start redis-server (is it installed? .ci/run installs it)');
    process.exit(1);
  }
}

if ((await postgresProblem()) !== undefined) {
  console.error(`# PostgreSQL does not answer at ${TEST_DATABASE_URL}: starting the machine's cluster`);
  let versions: string[] = [];
  try {
    versions = readdirSync('/etc/postgresql');
  } catch {
    // not installed: reported below
  }
  for (const version of versions) spawnSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'start'], { stdio: 'inherit' });
  if (!(await waitFor(async () => (await postgresProblem()) === undefined, 50))) {
    console.error(
      `# PostgreSQL cannot be used at ${TEST_DATABASE_URL}: ${await postgresProblem()}.\n` +
        '# The tests need a server there that lets that user in without a password (trust) and has that database: .ci/run sets this up, or point MODELGATE_TEST_DATABASE_URL elsewhere.',
    );
    process.exit(1);
  }
}

if (!existsSync(CHROMIUM)) {
  console.error(`# no Chromium at ${CHROMIUM}: installing Debian's chromium package for the browser tests`);
  const quiet: SpawnSyncOptions = { stdio: ['ignore', 'ignore', 'inherit'] };
  const install = () => spawnSync('apt-get', ['install', '-y', '-q', 'chromium'], quiet).status === 0;
  if (!install()) {
    spawnSync('apt-get', ['update', '-q'], quiet);
    if (!install()) console.error('# could not install chromium (apt-get install -y chromium needs root): the browser tests will fail');
  }
}

// Schemas of test files killed before their teardown. Their names carry the second they were made
// (test/helpers/database.ts): only those older than a day go, never one a run going on now uses.
const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
await client.connect();
const { rows } = await client.query<{ name: string }>("select nspname as name from pg_namespace where nspname like 'modelgate\\_test\\_%'");
const dayAgo = Date.now() / 1000 - 86_400;
for (const { name } of rows) {
  const made = Number(/^modelgate_test_(\d+)_/.exec(name)?.[1]);
  if (made < dayAgo) await client.query(`drop schema if exists "${name}" cascade`);
}
await client.end();
