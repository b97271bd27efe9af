// Runs once before the test files (tap's `before`): the real servers the tests use must answer.
// If nothing answers PING on 127.0.0.1:6379, a throwaway redis-server is started there (no
// persistence); if PostgreSQL does not answer on 127.0.0.1:5432, the machine's cluster is started
// (pg_ctlcluster, as the machine's own boot does). Either failing stops the run with a message.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { REDIS_HOST, REDIS_PORT, answersPing } from '../helpers/redis.js';
import { postgresAnswers, TEST_DATABASE_URL } from '../helpers/database.js';

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

if (!(await postgresAnswers())) {
  console.error(`# PostgreSQL does not answer at ${TEST_DATABASE_URL}: starting the machine's cluster`);
  let versions: string[] = [];
  try {
    versions = readdirSync('/etc/postgresql');
  } catch {
    // not installed: reported below
  }
  for (const version of versions) spawnSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'start'], { stdio: 'inherit' });
  if (!(await waitFor(postgresAnswers))) {
    console.error('# PostgreSQL did not answer (is it installed? .ci/run starts it); the store tests need it');
    process.exit(1);
  }
}
