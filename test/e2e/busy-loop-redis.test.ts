// A gateway whose event loop is stalled past REDIS_COMMAND_TIMEOUT while Redis is healthy (as when
// 200 large requests are parsed at once) answers every request: the budget store and the rate
// limits do not take the stall for a dead Redis and refuse with 503.
import t from 'tap';
import { startGateway, call, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { sleep, type FakeProvider } from '../helpers/fake-provider.js';
import { flushPrefix, redisEnv, testPrefix } from '../helpers/redis.js';

let upstream: FakeProvider;
const prefix = testPrefix();
t.before(async () => {
  upstream = await startFakeOpenAI();
});
t.after(async () => {
  await upstream.close();
  await flushPrefix(prefix);
});

/** Blocks the event loop the gateway shares with this test. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

t.test('stalls of 400 ms under a 200 ms Redis command timeout: no request is refused for the store', async (t) => {
  const gateway = await startGateway({
    ...PROTOCOL_ONLY,
    ...redisEnv(prefix),
    MODELGATE_STORE: 'redis',
    REDIS_COMMAND_TIMEOUT: '200',
    // Refuse rather than fall back: a timeout taken for an outage shows as a 503.
    MODELGATE_RATE_LIMIT_REDIS_FAILURE: 'refuse',
    MODELGATE_RATE_LIMIT_RPM: '100000',
    MODELGATE_RATE_LIMIT_RPH: '100000',
    MODELGATE_RATE_LIMIT_BURST: '100000',
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
  });
  t.teardown(() => gateway.close());
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 });
  t.equal((await call(gateway.url, '/chat/completions', { body })).status, 200, 'the gateway serves before the stalls');

  const statuses: number[] = [];
  for (let round = 0; round < 4; round++) {
    const requests = Array.from({ length: 40 }, () => call(gateway.url, '/chat/completions', { body }).then((answer) => statuses.push(answer.status)));
    // Stall while those requests are at their Redis commands.
    for (let stall = 0; stall < 3; stall++) {
      await sleep(15);
      busy(400);
    }
    await Promise.all(requests);
  }
  t.equal(statuses.length, 160);
  t.same(
    statuses.filter((status) => status !== 200),
    [],
    'every request answered 200, none 503',
  );
  t.notOk(
    gateway.logs.some((line) => /Redis failed|reservation failed|store unavailable/i.test(String(line.msg))),
    'nothing logged a Redis failure',
  );
});

// Listening servers keep the event loop alive: end the root test explicitly so t.after runs.
t.end();
