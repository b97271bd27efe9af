// Runs once before the test files (tap's `before`): if nothing answers PING on 127.0.0.1:6379,
// start a throwaway redis-server there (no persistence) and wait until it answers.
import { spawnSync } from 'node:child_process';
import { REDIS_HOST, REDIS_PORT, answersPing } from '../helpers/redis.js';

if (!(await answersPing())) {
  console.error(`# no Redis on ${REDIS_HOST}:${REDIS_PORT}: starting redis-server`);
  const started = spawnSync('redis-server', ['--daemonize', 'yes', '--bind', REDIS_HOST, '--port', String(REDIS_PORT), '--save', '', '--appendonly', 'no'], {
    stdio: 'inherit',
  });
  if (started.error || started.status !== 0) {
    console.error('# could not start redis-server (is it installed? .ci/run installs it)');
    process.exit(1);
  }
  for (let i = 0; i < 50 && !(await answersPing()); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  if (!(await answersPing())) {
    console.error('# redis-server did not answer');
    process.exit(1);
  }
}
