// The shared Redis connection's boot wait (waitUntilReady), against the real test Redis and a port
// nobody listens on: ready → true; a failed connection attempt → false at once, not after the bound.
// Its command timeout measures Redis, not a busy event loop: a loop blocked past the timeout while
// Redis is healthy is no failure; a Redis that stops answering still fails in bounded time.
import t from 'tap';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { connect, createServer, type Socket } from 'node:net';
import { pino } from 'pino';
import { createRedis, waitUntilReady, type RedisSettings } from '../../core/redis.js';
import { REDIS_HOST, REDIS_PORT, closedPort, testPrefix } from '../helpers/redis.js';
import { startPrivateRedis } from '../helpers/private-redis.js';

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

/** Blocks the event loop, as parsing 200 large bodies at once does. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

t.test('an event loop blocked past REDIS_COMMAND_TIMEOUT while Redis is healthy: every command answers', async (t) => {
  const redis = createRedis(settings(REDIS_PORT), logger); // 200 ms
  t.teardown(() => redis.disconnect());
  t.equal(await waitUntilReady(redis, 5000), true);
  for (let round = 0; round < 3; round++) {
    const replies = Array.from({ length: 50 }, () => redis.ping());
    busy(500);
    t.same(await Promise.all(replies), Array(50).fill('PONG'), `round ${round + 1}: 50 commands sent before a 500 ms stall all answered`);
  }
});

t.test('a Redis that stops answering still times out, near REDIS_COMMAND_TIMEOUT on an idle loop and within the bound on a busy one', async (t) => {
  const server = await startPrivateRedis();
  t.teardown(() => server.stop());
  const redis = createRedis(settings(server.port), logger); // 200 ms
  t.teardown(() => redis.disconnect());
  t.equal(await waitUntilReady(redis, 5000), true);
  server.pause();
  t.teardown(() => server.resume());

  let started = performance.now();
  await t.rejects(redis.ping(), { message: 'Command timed out' });
  let took = performance.now() - started;
  t.ok(took >= 200 && took < 800, `idle loop: timed out after ${took.toFixed(0)} ms`);

  started = performance.now();
  const ping = redis.ping();
  busy(500);
  await t.rejects(ping, { message: 'Command timed out' });
  took = performance.now() - started;
  t.ok(took < 200 * 10, `busy loop: timed out after ${took.toFixed(0)} ms, within 10 × the timeout`);
});


/** Counts the system-call-level writes (write or writev) made on the connection's socket. */
function countWrites(redis: ReturnType<typeof createRedis>): { count: number } {
  const socket = redis.stream as unknown as { _write: (...args: unknown[]) => void; _writev: (...args: unknown[]) => void };
  const counter = { count: 0 };
  const write = socket._write.bind(socket);
  const writev = socket._writev.bind(socket);
  socket._write = (...args) => (counter.count++, write(...args));
  socket._writev = (...args) => (counter.count++, writev(...args));
  return counter;
}

t.test('the commands issued in one turn of the event loop leave in one write, and each is answered', async (t) => {
  const redis = createRedis(settings(REDIS_PORT), logger);
  t.teardown(() => redis.disconnect());
  t.equal(await waitUntilReady(redis, 5000), true);
  const key = 'cork-test';
  t.teardown(() => redis.del(key));
  const writes = countWrites(redis);
  // Some issued at once, more from promise reactions of the same turn (as a request's steps do).
  const first = [redis.set(key, '1'), redis.incr(key), redis.incr(key)];
  const later = Promise.resolve().then(() => [redis.incr(key), redis.get(key)]);
  const replies = await Promise.all([...first, ...(await later)]);
  t.same(replies, ['OK', 2, 3, 4, '4'], 'in the order issued');
  t.equal(writes.count, 1, 'five commands, one write');

  // The next turn's commands are not held back by the earlier batch: they leave in their own write.
  const before = writes.count;
  t.equal(await redis.incr(key), 5);
  t.equal(writes.count, before + 1);
});

t.test('a command issued by a callback that then holds the loop just past REDIS_COMMAND_TIMEOUT is answered, not timed out', async (t) => {
  // The command waits in the corked socket while the callback runs: its timeout starts when it is
  // written. (Timed from when it was issued, the late timer saw a loop only a few ms late, gave the
  // poll phase one look, microseconds after the write, and failed a healthy Redis.)
  const redis = createRedis(settings(REDIS_PORT), logger); // 200 ms
  t.teardown(() => redis.disconnect());
  t.equal(await waitUntilReady(redis, 5000), true);
  const replies: Array<Promise<unknown>> = [];
  for (let i = 0; i < 20; i++) {
    // Issued from an I/O callback (the poll phase), as a request's steps are.
    const server = createServer();
    await new Promise<void>((resolve) => {
      server.listen(0, '127.0.0.1', () => {
        const client = connect((server.address() as { port: number }).port, '127.0.0.1').on('error', () => {});
        server.once('connection', (socket: Socket) => {
          replies.push(redis.ping().catch((error: Error) => error.message));
          busy(201 + (i % 4));
          socket.destroy();
          client.destroy();
          server.close();
          resolve();
        });
      });
    });
  }
  t.same(await Promise.all(replies), Array(20).fill('PONG'));
});

/** The timeout timer core/redis-timeout.ts keeps on a command, in ioredis's own (private) field. */
const timerOf = (command: object) => (command as { _commandTimeoutTimer?: NodeJS.Timeout })._commandTimeoutTimer;

t.test('a command answered is let go at once: its timeout timer does not hold it for REDIS_COMMAND_TIMEOUT', async (t) => {
  // The timer lives where ioredis keeps its own command timer, which ioredis clears when the reply
  // arrives. Held by a live timer instead, every command of a request and its arguments would stay
  // reachable for the whole timeout (docs/benchmarks.md); an ioredis upgrade that stopped clearing
  // it would make this fail.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const { Command } = await import('ioredis');
  const redis = createRedis({ ...settings(REDIS_PORT), REDIS_COMMAND_TIMEOUT: 60_000 }, logger);
  t.teardown(() => redis.disconnect());
  t.equal(await waitUntilReady(redis, 5000), true);
  let collected = 0;
  const registry = new FinalizationRegistry(() => collected++);
  await (async () => {
    const commands = Array.from({ length: 5 }, () => new Command('ping', [], { replyEncoding: 'utf8' }));
    for (const command of commands) registry.register(command, undefined);
    const replies = commands.map((command) => redis.sendCommand(command));
    // Written at the next check phase, when their timeouts start.
    await new Promise((resolve) => setImmediate(resolve));
    t.ok(commands.every((command) => timerOf(command)?.hasRef() === false), 'each waiting command has its (unref) timer');
    t.same(await Promise.all(replies), Array(5).fill('PONG'));
    t.same(commands.map(timerOf), Array(5).fill(undefined), 'each answered command has none');
  })();
  // Up to ~1 s on a busy host; done as soon as all are collected.
  for (let i = 0; i < 100 && collected < 5; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  t.equal(collected, 5, 'all five are collected long before their 60-s timeout');
});

t.test('a command refused at once (no connection, no offline queue) gets no timeout timer', async (t) => {
  const { Command } = await import('ioredis');
  const redis = createRedis({ ...settings(await closedPort()), REDIS_COMMAND_TIMEOUT: 60_000 }, logger);
  t.teardown(() => redis.disconnect());
  t.equal(await waitUntilReady(redis, 5000), false);
  const command = new Command('ping', [], { replyEncoding: 'utf8' });
  await t.rejects(redis.sendCommand(command) as Promise<unknown>, /enableOfflineQueue/);
  t.equal(timerOf(command), undefined);
});
