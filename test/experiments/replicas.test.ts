// Two replicas on one PostgreSQL database: an experiment created on one applies on the other within
// the check interval; a user gets the same arm from either replica; feedback sent to the replica
// that did not serve the request is attributed once its exposure is written; and when two replicas
// race to stop it, one wins and experiment.finished goes out once.
import t from 'tap';
import { call, startGateway } from '../helpers/gateway.js';
import { postgresEnv, testSchema } from '../helpers/database.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { startReceiver, waitFor } from '../helpers/receivers.js';

const SECRET = 'a raw secret of the operator, 32+ chars';
const upstream = await startFakeOpenAI();
t.teardown(() => upstream.close());

t.test('replicas agree on every assignment and end an experiment once', async (t) => {
  const receiver = await startReceiver(Buffer.from(SECRET, 'utf8'));
  t.teardown(() => receiver.close());
  const env = {
    ...postgresEnv(testSchema()),
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_CACHE_ENABLED: 'false',
    MODELGATE_AB_TESTING_ENABLED: 'true',
    MODELGATE_AB_TESTING_CHECK_INTERVAL: '1',
    MODELGATE_WEBHOOKS_ENABLED: 'true',
    MODELGATE_WEBHOOK_SECRET: SECRET,
    MODELGATE_WEBHOOK_URL: receiver.url,
    MODELGATE_WEBHOOK_EVENTS: 'experiment.finished',
  };
  const a = await startGateway(env);
  t.teardown(() => a.close());
  const b = await startGateway(env);
  t.teardown(() => b.close());

  const created = await call(a.url, '/admin/experiments', {
    body: JSON.stringify({ name: 'shared', match: { model: 'gpt-4o-mini' }, unit: 'header:x-end-user', arms: [{ name: 'a', model: 'gpt-4o-mini', weight: 2 }, { name: 'b', model: 'gpt-4o', weight: 1 }], metrics: ['quality_score'] }),
  });
  t.equal(created.status, 201);
  const ask = (url: string, user: string) => call(url, '/chat/completions', { headers: { 'x-end-user': user }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }) });
  t.ok(await waitFor(async () => (await ask(b.url, 'probe')).headers.get('x-modelgate-experiment') !== null, 5000), 'the other replica picked it up');

  let served: { requestId: string; arm: string } | undefined;
  for (let i = 0; i < 30; i++) {
    const fromA = await ask(a.url, `person-${i}`);
    const fromB = await ask(b.url, `person-${i}`);
    t.equal(fromA.headers.get('x-modelgate-experiment'), fromB.headers.get('x-modelgate-experiment'), `person-${i} has one arm on both replicas`);
    served ??= { requestId: fromA.headers.get('x-request-id')!, arm: fromA.headers.get('x-modelgate-experiment')!.split('/')[1]! };
  }

  // Feedback to the replica that did not serve it: found once A has written its exposures (within about a second).
  let rated: Awaited<ReturnType<typeof call>> | undefined;
  t.ok(await waitFor(async () => {
    rated = await call(b.url, '/feedback', { body: JSON.stringify({ request_id: served!.requestId, metric: 'quality_score', value: 0.75 }) });
    return rated.status === 200;
  }, 5000), 'feedback on another replica');
  t.equal(rated!.json.arm, served!.arm);

  const [stopA, stopB] = await Promise.all([
    call(a.url, `/admin/experiments/${created.json.id}/stop`, { body: '{}' }),
    call(b.url, `/admin/experiments/${created.json.id}/stop`, { body: '{}' }),
  ]);
  t.same([stopA.status, stopB.status].sort(), [200, 409], 'one stop wins');
  t.ok(await waitFor(() => receiver.accepted.length >= 1));
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.equal(receiver.accepted.length, 1, 'experiment.finished once');
  // Each replica writes its exposures in batches: waited for, not assumed written after the pause
  // above (a busy host once read 51 of them there).
  let results: { arms: Array<{ requests: number; units: number }> } = { arms: [] };
  const counted = () => results.arms.reduce((sum, arm) => sum + arm.requests, 0);
  await waitFor(async () => {
    results = (await call(b.url, `/admin/experiments/${created.json.id}`)).json.results;
    return counted() >= 60;
  }, 10_000);
  const requests = counted();
  t.ok(requests >= 60, `both replicas' exposures are counted (${requests})`);
  const units = results.arms.reduce((sum, arm) => sum + arm.units, 0);
  t.ok(units >= 30 && units <= 32, `a user is one unit whichever replica served them (${units})`);
});
