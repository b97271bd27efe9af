// The attempt's own abort signal (Canceller) behaves as an AbortSignal does for its readers, and the
// per-attempt timeout aborts it — with a TimeoutError reason when the time runs out, with the
// client's reason when the client leaves — and leaves it alone once the attempt settled.
import t from 'tap';
import { Canceller } from '../../core/cancellation.js';
import { AttemptTimeout } from '../../plugins/failover/policies.js';
import { AbortedError } from '../../core/proxy.js';
import { isUpstreamError } from '../../core/upstream-error.js';

t.test('listeners run once at the abort; a removed or late listener never runs; a second abort does nothing', async (t) => {
  const canceller = new Canceller();
  const calls: string[] = [];
  const first = () => calls.push('first');
  const removed = () => calls.push('removed');
  canceller.addEventListener('abort', first, { once: true });
  canceller.addEventListener('abort', removed);
  canceller.addEventListener('abort', () => calls.push(`second saw ${String(canceller.reason)}`));
  canceller.removeEventListener('abort', removed);
  t.equal(canceller.aborted, false);
  canceller.abort('gone');
  t.equal(canceller.aborted, true);
  t.equal(canceller.reason, 'gone');
  canceller.abort('again');
  canceller.addEventListener('abort', () => calls.push('late'));
  t.same(calls, ['first', 'second saw gone']);
  t.equal(canceller.reason, 'gone');
});

t.test('a listener that throws does not keep the others from running; abort returns and reports it', async (t) => {
  const reported: unknown[] = [];
  const canceller = new Canceller((error) => reported.push(error));
  const calls: string[] = [];
  canceller.addEventListener('abort', () => {
    throw new Error('listener failed');
  });
  canceller.addEventListener('abort', () => calls.push('ran'));
  canceller.abort('x');
  t.same(calls, ['ran']);
  t.match(reported, [{ message: 'listener failed' }]);
});

t.test('a listener added twice runs once; one removed by an earlier listener during the abort does not run', async (t) => {
  const canceller = new Canceller();
  const calls: string[] = [];
  const twice = () => calls.push('twice');
  const later = () => calls.push('later');
  canceller.addEventListener('abort', twice);
  canceller.addEventListener('abort', twice);
  canceller.addEventListener('abort', () => canceller.removeEventListener('abort', later));
  canceller.addEventListener('abort', later);
  canceller.abort('x');
  t.same(calls, ['twice']);
});

t.test('the attempt timeout aborts the attempt with a TimeoutError and fails as a timeout', async (t) => {
  const timeout = new AttemptTimeout(30);
  let seen: { aborted: boolean; reason: unknown } | undefined;
  const client = new AbortController();
  const failure = await timeout
    .run(
      'openai',
      (signal) =>
        new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () => {
            seen = { aborted: signal.aborted, reason: signal.reason };
            reject(new Error('aborted by the timeout'));
          }),
        ),
      client.signal,
    )
    .catch((error: unknown) => error);
  t.ok(isUpstreamError(failure) && failure.reason === 'timeout', 'a timeout');
  t.equal(seen?.aborted, true);
  t.equal((seen?.reason as Error).name, 'TimeoutError', 'the reason core/attempt.ts reads as a timeout');
});

t.test('a client that leaves aborts the attempt with its reason; a settled attempt is left alone', async (t) => {
  const timeout = new AttemptTimeout(10_000);
  const client = new AbortController();
  let reason: unknown;
  const running = timeout.run('openai', (signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject((reason = signal.reason)))), client.signal);
  client.abort('client disconnected');
  t.ok((await running.catch((error: unknown) => error)) instanceof AbortedError);
  t.equal(reason, 'client disconnected');

  const later = new AbortController();
  let inner: { aborted: boolean } | undefined;
  const value = await timeout.run('openai', async (signal) => ((inner = signal), 'answer'), later.signal);
  later.abort('after the answer');
  t.equal(value, 'answer');
  t.equal(inner?.aborted, false, 'not aborted once the attempt settled');
});
