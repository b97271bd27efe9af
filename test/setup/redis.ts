// Runs once before the test files (tap's `before`): if nothing answers PING on 127.0.0.1:6379,
// start a throwaway redis-server there (no persistence) and wait until it answers.
import { spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { REDIS_HOST, REDIS_PORT } from '../helpers/redis.js';

async function ping(): Promise<boolean> {
  const redis = new Redis({ host: REDIS_HOST, port: REDIS_PORT, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

if (!(await ping())) {
  console.error(`# no Redis on ${REDIS_HOST}:${REDIS_PORT}: starting redis-server`);
  const started = spawnSync('redis-server', ['--daemonize', 'yes', '--bind', REDIS_HOST, '--port', String(REDIS_PORT), '--save', '', '--appendonly', 'no'], {
    stdio: 'inherit',
  });
  if (started.error || started.status !== 0) {
    console.error('# could not start redis-server (is it installed? .ci/run installs it)');
    process.exit(1);
  }
  for (let i = 0; i < 50 && !(await ping()); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  if (!(await ping())) {
    console.error('# redis-server did not answer');
    process.exit(1);
  }
}
