// The shared Redis connection's boot wait (waitUntilReady), against the real test Redis and a port
// nobody listens on: ready → true; a failed connection attempt → false at once, not after the bound.
import t from 'tap';
import { createServer, type Socket } from 'node:net';
import { pino } from 'pino';
import { createRedis, waitUntilReady, type RedisSettings } from '../../core/redis.js';
import { REDIS_HOST, REDIS_PORT, closedPort, testPrefix } from '../helpers/redis.js';

const logger = pino({ level: 'silent' });
const settings = (port: number): RedisSettings =>
  ({ REDIS_HOST, REDIS_PORT: port, REDIS_DB: 0, REDIS_KEY_PREFIX: testPrefix(), REDIS_COMMAND_TIMEOUT: 200 }) as RedisSettings;


t.test('a Redis that answers: ready', async (t) => {
  const redis = createRedis(settings(REDIS_PORT), logger);
  t.teardown(() => redis.disconnect());
  t.equal(await waitUntilReady(redis, 5000), true);
  t.equal(await waitUntilReady(redis, 5000), true, 'and at once when it already is');
});

t.test('a Redis that is down: false as soon as the first connection attempt fails, not after the bound', async (t) => {
  const redis = createRedis(settings(await closedPort()), logger);
  t.teardown(() => redis.disconnect());
  const BOUND_MS = 10_000;
  const errorListeners = redis.listenerCount('error');
  const started = Date.now();
  t.equal(await waitUntilReady(redis, BOUND_MS), false);
  const took = Date.now() - started;
  t.ok(took < BOUND_MS / 2, `settled after ${took} ms`);
  t.equal(redis.listenerCount('error'), errorListeners, 'its error listener is removed');
});

t.test('a Redis that accepts connections but never answers: the parts waiting at boot share one bounded wait', async (t) => {
  const sockets: Socket[] = [];
  const silent = createServer((socket) => void sockets.push(socket)); // accepts, says nothing
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    silent.close();
  });
  const redis = createRedis(settings((silent.address() as { port: number }).port), logger);
  t.teardown(() => redis.disconnect());
  const started = Date.now();
  t.equal(await waitUntilReady(redis, 300), false, 'the first part waited out the bound');
  t.equal(await waitUntilReady(redis, 300), false, 'the next one is told at once');
  const took = Date.now() - started;
  t.ok(took >= 300 && took < 600, `two parts waited ${took} ms in all, not 2 × 300`);
});
