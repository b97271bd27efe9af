// The request's signal reaches cockatiel's retry and breaker policies as a Canceller, not an
// AbortSignal (plugins/failover/policies.ts, forCockatiel): cockatiel may read only `aborted` of it
// and must hand the same object back to the function it runs. A cockatiel upgrade that starts using
// more of the signal fails here rather than in production.
import t from 'tap';
import { Canceller, type Cancellation } from '../../core/cancellation.js';
import { Breakers, RetryPolicies, type RetryConfig } from '../../plugins/failover/policies.js';
import { HealthRegistry } from '../../core/health.js';
import { badResponse } from '../../core/upstream-error.js';

/** A Canceller that records which of its properties anyone other than the test read. */
function watched(): { signal: Cancellation; read: Set<string>; canceller: Canceller } {
  const canceller = new Canceller();
  const read = new Set<string>();
  const signal = new Proxy(canceller, {
    get(target, name, receiver) {
      read.add(String(name));
      return Reflect.get(target, name, receiver);
    },
  });
  return { signal, read, canceller };
}

const config: RetryConfig = { attempts: 2, delayMs: 1, multiplier: 2, exponential: false };

t.test('retries and the breaker read only `aborted` and pass the same signal on', async (t) => {
  const health = new HealthRegistry();
  const retries = new RetryPolicies(health, config);
  const breakers = new Breakers({ enabled: true, threshold: 5, recoveryMs: 1000 }, health, ['openai']);
  const { signal, read } = watched();
  const handed: Cancellation[] = [];
  let calls = 0;
  const value = await retries.execute(
    config,
    true,
    ({ signal: fromRetry }) => {
      handed.push(fromRetry);
      return breakers.execute(
        'openai',
        async (fromBreaker) => {
          handed.push(fromBreaker);
          // The first call fails retryably, so the retry policy runs its loop (and its checks) again.
          if (++calls === 1) throw badResponse('openai', 'the body is not JSON');
          return 'answer';
        },
        fromRetry,
      );
    },
    signal,
    () => false,
  );
  t.equal(value, 'answer');
  t.equal(calls, 2, 'retried once');
  t.ok(handed.every((given) => given === signal), 'the very signal, every time');
  // Our own untilAborted adds and removes a listener (which reads the Canceller's list).
  const ours = new Set(['aborted', 'addEventListener', 'removeEventListener', 'listeners']);
  t.same([...read].filter((name) => !ours.has(name)), [], 'nothing but aborted (and our own listener)');
  t.ok(read.has('aborted'));
});

t.test('a client that leaves during a retry policy run settles it at once', async (t) => {
  const health = new HealthRegistry();
  const retries = new RetryPolicies(health, config);
  const { signal, canceller } = watched();
  const running = retries.execute(config, true, () => new Promise(() => {}), signal, () => false);
  canceller.abort(new Error('client disconnected'));
  await t.rejects(running, { name: 'AbortedError' });
});
