// A/B testing end to end, through the real gateway and the OpenAI SDK, on both store engines: an
// operator starts an experiment with one call; unchanged clients are split by their `user` into
// sticky arms (the answer says which, the upstream sees the arm's model); every exposure is
// recorded; feedback is attributed to the arm that served the request, late feedback too, and a
// key cannot rate another key's request; the results say which arm wins with intervals; one more
// call promotes it, and from then on matching traffic goes there; experiment.finished is sent as a
// signed webhook.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, startGateway, type TestGateway } from '../helpers/gateway.js';
import { ENGINES, engineEnv } from '../helpers/database.js';
import { FakeProvider } from '../helpers/fake-provider.js';
import { openAIResponder, PROVIDER_KEYS } from '../helpers/fakes.js';
import { keyStore } from '../helpers/keys.js';
import { startReceiver, waitFor } from '../helpers/receivers.js';

const SECRET = 'a raw secret of the operator, 32+ chars';
const OTHER = 'uc_other_app_0123456789abcdef';
/** The fixture answer: 24 prompt + 8 completion tokens. */
const TOKENS = 32;
const BIG_PRICE = 1e-6;
const MINI_PRICE = 1e-7;

const upstream = await FakeProvider.start(openAIResponder(PROVIDER_KEYS.openai));
t.teardown(() => upstream.close());

function catalogFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'modelgate-ab-')), 'models.json');
  const model = (id: string, native: string, price: number) => ({ provider: 'openai', id, native_id: native, price: { input: price, output: price }, quality: { score: 0.9 } });
  writeFileSync(file, JSON.stringify({ models: [model('big', 'gpt-4o', BIG_PRICE), model('mini', 'gpt-4o-mini', MINI_PRICE)] }));
  return file;
}
const CATALOG = catalogFile();

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_MODEL_CATALOG: CATALOG,
    MODELGATE_CACHE_ENABLED: 'false',
    MODELGATE_AB_TESTING_ENABLED: 'true',
    MODELGATE_AB_TESTING_CHECK_INTERVAL: '1',
    MODELGATE_RETRIES: '0',
    ...extra,
  };
}

const EXPERIMENT = {
  name: 'big-vs-mini',
  match: { model: 'big' },
  unit: 'user',
  arms: [
    { name: 'control', model: 'big', weight: 50 },
    { name: 'mini', model: 'mini', weight: 50 },
  ],
  metrics: ['cost', 'user_satisfaction'],
  primary_metric: 'cost',
  // Latency guardrails compare noisy timings of a shared machine: their logic has its own tests.
  guardrails: ['error_rate'],
};

const admin = (gateway: TestGateway, path: string, body?: unknown, method?: string) =>
  call(gateway.url, `/admin/experiments${path}`, { method: method ?? (body === undefined ? 'GET' : 'POST'), body: body === undefined ? undefined : JSON.stringify(body) });
const feedback = (gateway: TestGateway, body: unknown, key?: string) => call(gateway.url, '/feedback', { body: JSON.stringify(body), key });

for (const engine of ENGINES) {
  t.test(`an experiment from start to promotion (${engine})`, async (t) => {
    const receiver = await startReceiver(Buffer.from(SECRET, 'utf8'));
    t.teardown(() => receiver.close());
    const gateway = await startGateway(
      env({ ...engineEnv(engine), MODELGATE_WEBHOOKS_ENABLED: 'true', MODELGATE_WEBHOOK_SECRET: SECRET, MODELGATE_WEBHOOK_URL: receiver.url, MODELGATE_WEBHOOK_EVENTS: 'experiment.finished', MODELGATE_WEBHOOK_RETRY_DELAY: '100' }),
      { keyStores: [keyStore({ [OTHER]: {} })] },
    );
    t.teardown(() => gateway.close());
    upstream.reset();

    const created = await admin(gateway, '', EXPERIMENT);
    t.equal(created.status, 201, 'one call starts it');
    t.match(created.json, { object: 'experiment', name: 'big-vs-mini', status: 'running', control: 'control', unit: 'user', duration_days: 7, promoted: null });
    const id = created.json.id as string;

    // Unchanged clients: the OpenAI SDK, a `user` per end user.
    const client = gateway.client();
    const armOf = new Map<string, string>();
    const requestIds: Array<{ user: string; arm: string; requestId: string }> = [];
    for (let i = 0; i < 40; i++) {
      const user = `user-${i}`;
      for (let repeat = 0; repeat < 2; repeat++) {
        const { response, data } = await client.chat.completions.create({ model: 'big', user, messages: [{ role: 'user', content: 'Hello?' }] }).withResponse();
        const header = response.headers.get('x-modelgate-experiment');
        t.ok(header?.startsWith('big-vs-mini/'), 'the answer names experiment and arm');
        const arm = header!.split('/')[1]!;
        if (repeat === 1) t.equal(arm, armOf.get(user), `${user} stays in ${arm}`);
        armOf.set(user, arm);
        t.equal(response.headers.get('x-modelgate-model'), arm === 'mini' ? 'mini' : 'big', 'the arm\'s model answered');
        t.ok(data.choices[0]?.message.content, 'an ordinary answer');
        requestIds.push({ user, arm, requestId: response.headers.get('x-request-id')! });
      }
    }
    const sentModels = upstream.requests.map((r) => r.json?.model);
    t.equal(sentModels.filter((m) => m === 'gpt-4o-mini').length, requestIds.filter((r) => r.arm === 'mini').length, 'the upstream saw each arm\'s model');
    const minis = [...armOf.values()].filter((arm) => arm === 'mini').length;
    t.ok(minis >= 10 && minis <= 30, `${minis} of 40 users in mini`);

    // A request without a user is not in the experiment.
    const outside = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ model: 'big', messages: [{ role: 'user', content: 'Hi' }] }) });
    t.equal(outside.status, 200);
    t.equal(outside.headers.get('x-modelgate-experiment'), null, 'no unit, no assignment');

    // Feedback: own requests, attributed to the arm that served them.
    const rated = requestIds.filter((_, i) => i % 2 === 0);
    for (const { arm, requestId } of rated) {
      const sent = await feedback(gateway, { request_id: requestId, metric: 'user_satisfaction', value: arm === 'mini' ? 4 : 'down' });
      t.equal(sent.status, 200);
      t.match(sent.json, { object: 'feedback', arm, experiment: 'big-vs-mini', value: arm === 'mini' ? 4 : 1 });
    }
    const first = requestIds[0]!;
    const foreign = await feedback(gateway, { request_id: first.requestId, metric: 'user_satisfaction', value: 5 }, OTHER);
    t.equal(foreign.status, 404, 'another key cannot rate it');
    t.match(foreign.json.error, { code: 'request_not_found', param: 'request_id' });
    t.equal((await feedback(gateway, { request_id: 'never-seen', metric: 'user_satisfaction', value: 5 })).status, 404, 'an unknown id is 404');
    t.equal((await feedback(gateway, { request_id: outside.headers.get('x-request-id'), metric: 'user_satisfaction', value: 5 })).status, 404, 'a request outside experiments is 404');
    const undeclared = await feedback(gateway, { request_id: first.requestId, metric: 'quality_score', value: 0.5 });
    t.match(undeclared, { status: 400, json: { error: { param: 'metric' } } }, 'a metric the experiment does not collect');
    for (const value of [0, 6, 'meh', null, 1e300]) {
      const bad = await feedback(gateway, { request_id: first.requestId, metric: 'user_satisfaction', value });
      t.equal(bad.status, 400, `value ${JSON.stringify(value)} is refused`);
    }
    t.equal((await feedback(gateway, { request_id: first.requestId, metric: 'user_satisfaction', value: 1, extra: true })).status, 400, 'unknown fields are refused');

    // Results: per arm, from the recorded exposures and feedback.
    const read = await admin(gateway, `/${id}`);
    t.equal(read.status, 200);
    const results = read.json.results;
    const byName = (name: string) => results.arms.find((arm: { name: string }) => arm.name === name);
    const control = byName('control');
    const mini = byName('mini');
    t.equal(control.requests + mini.requests, 80, 'every exposure recorded (the one outside is not)');
    t.equal(mini.units, minis);
    t.equal(control.units, 40 - minis);
    t.ok(Math.abs(control.cost_per_request - TOKENS * BIG_PRICE) < 1e-12, `control costs ${control.cost_per_request} per request`);
    t.ok(Math.abs(mini.cost_per_request - TOKENS * MINI_PRICE) < 1e-12, `mini costs ${mini.cost_per_request} per request`);
    t.equal(mini.error_rate, 0);
    t.ok(mini.latency_ms.p50 >= 0 && mini.latency_ms.p95 >= mini.latency_ms.p50, 'latency percentiles');
    t.match(mini.metrics.user_satisfaction, { n: rated.filter((r) => r.arm === 'mini').length, mean: 4 });
    t.match(control.metrics.user_satisfaction, { mean: 1 });
    t.match(mini.metrics.cost.vs_control, { verdict: 'better' });
    t.ok(mini.metrics.cost.vs_control.ci_high < 0, 'mini is cheaper with confidence');
    t.match(results.decision, { winner: 'mini', method: 'msprt', primary_metric: 'cost', units_needed: 0 });

    // Promote: the winner by default, recorded with who and when, and the experiment is over.
    const promoted = await admin(gateway, `/${id}/promote`, {});
    t.equal(promoted.status, 200);
    t.match(promoted.json, { status: 'finished', finish_reason: 'promoted', winner: 'mini', promoted: { arm: 'mini', by: 'bootstrap' } });
    t.equal((await admin(gateway, `/${id}/promote`, { arm: 'control' })).json.error?.code, 'already_promoted', 'a promotion is not flipped');
    t.ok(await waitFor(() => receiver.accepted.length === 1), 'experiment.finished arrives as a signed webhook');
    t.match(receiver.accepted[0]!.json, { type: 'experiment.finished', data: { experiment_id: id, name: 'big-vs-mini', reason: 'promoted', winner: 'mini' } });

    // From now on every request for `big` goes to mini, with or without a user; no experiment header.
    upstream.reset();
    for (const user of ['user-0', 'user-1', undefined]) {
      const answer = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ model: 'big', user, messages: [{ role: 'user', content: 'Hi' }] }) });
      t.equal(answer.headers.get('x-modelgate-model'), 'mini');
      t.equal(answer.headers.get('x-modelgate-experiment'), null);
    }
    t.ok(upstream.requests.every((r) => r.json?.model === 'gpt-4o-mini'));

    // Late feedback, after the experiment finished, still counts for the arm that served.
    const late = requestIds.find((r, i) => i % 2 === 1 && r.arm === 'mini')!;
    t.equal((await feedback(gateway, { request_id: late.requestId, metric: 'user_satisfaction', value: 'up' })).status, 200);
    const after = await admin(gateway, `/${id}`);
    const miniAfter = after.json.results.arms.find((arm: { name: string }) => arm.name === 'mini');
    t.equal(miniAfter.metrics.user_satisfaction.n, mini.metrics.user_satisfaction.n + 1, 'the late vote counted');
    t.equal(after.json.status, 'finished');
    t.equal(after.json.promoted.arm, 'mini', 'later results do not move the promotion');

    // Deleting the experiment removes the promotion: `big` is big again.
    t.equal((await admin(gateway, `/${id}`, undefined, 'DELETE')).status, 200);
    const restored = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ model: 'big', user: 'user-0', messages: [{ role: 'user', content: 'Hi' }] }) });
    t.equal(restored.headers.get('x-modelgate-model'), 'big');
    t.equal((await feedback(gateway, { request_id: late.requestId, metric: 'user_satisfaction', value: 5 })).status, 404, 'its requests are no longer in an experiment');
  });
}

t.test('the cache never serves one arm\'s answer to another, nor to traffic outside the experiment', async (t) => {
  const gateway = await startGateway(env({ MODELGATE_CACHE_ENABLED: 'true' }));
  t.teardown(() => gateway.close());
  const arms = [{ name: 'a', model: 'big' }, { name: 'b', model: 'big' }];
  t.equal((await admin(gateway, '', { ...EXPERIMENT, name: 'cached', unit: 'header:x-end-user', arms })).status, 201);
  // The unit rides in a header, so every user sends the very same body.
  const ask = (user?: string) => call(gateway.url, '/chat/completions', { headers: user ? { 'x-end-user': user } : {}, body: JSON.stringify({ model: 'big', messages: [{ role: 'user', content: 'The same question' }] }) });
  // Users in two arms on the same model: only the arm in the key keeps their answers apart.
  const users = Array.from({ length: 20 }, (_, i) => `cache-user-${i}`);
  const first = new Map<string, string>();
  for (const user of users) {
    const answer = await ask(user);
    const arm = answer.headers.get('x-modelgate-experiment')!.split('/')[1]!;
    if (!first.has(arm)) {
      first.set(arm, user);
      t.equal(answer.headers.get('x-modelgate-cache'), 'MISS', `the first request of arm ${arm} is a miss`);
    } else {
      t.equal(answer.headers.get('x-modelgate-cache'), 'HIT', `later requests of arm ${arm} hit its own entry`);
    }
  }
  t.equal(first.size, 2, 'both arms were seen');
  t.equal((await ask()).headers.get('x-modelgate-cache'), 'MISS', 'outside the experiment: its own entry');
});

t.test('budgets and limits still hold inside an experiment', async (t) => {
  const gateway = await startGateway(env(), { keyStores: [keyStore({ [OTHER]: { limits: { daily_cost_limit: TOKENS * BIG_PRICE * 2.5 } } })] });
  t.teardown(() => gateway.close());
  t.equal((await admin(gateway, '', { ...EXPERIMENT, unit: 'key', arms: [{ name: 'control', model: 'big' }, { name: 'b', model: 'big', weight: 1 }] })).status, 201);
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) {
    const answer = await call(gateway.url, '/chat/completions', { key: OTHER, body: JSON.stringify({ model: 'big', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 8 }) });
    t.ok(answer.headers.get('x-modelgate-experiment'), 'in the experiment');
    statuses.push(answer.status);
  }
  t.ok(statuses.includes(429), `the key's daily budget refuses within the experiment (${statuses.join(', ')})`);
  t.ok(statuses.filter((s) => s === 200).length <= 3, 'no more answers than the budget pays for');
});

t.test('an experiment ends at its end date, and with early stop at its decision; the event says which', async (t) => {
  const receiver = await startReceiver(Buffer.from(SECRET, 'utf8'));
  t.teardown(() => receiver.close());
  const gateway = await startGateway(env({ MODELGATE_WEBHOOKS_ENABLED: 'true', MODELGATE_WEBHOOK_SECRET: SECRET, MODELGATE_WEBHOOK_URL: receiver.url, MODELGATE_WEBHOOK_EVENTS: 'experiment.finished', MODELGATE_WEBHOOK_RETRY_DELAY: '100' }));
  t.teardown(() => gateway.close());
  // About two seconds long.
  const short = await admin(gateway, '', { ...EXPERIMENT, name: 'short', duration_days: 2 / 86_400 });
  t.equal(short.status, 201);
  t.ok(await waitFor(() => receiver.accepted.some((r) => r.json.data.name === 'short'), 10_000), 'finished at its end date');
  t.match(receiver.accepted.find((r) => r.json.data.name === 'short')!.json.data, { reason: 'duration', winner: null });
  t.match((await admin(gateway, `/${short.json.id}`)).json, { status: 'finished', finish_reason: 'duration' });

  const early = await admin(gateway, '', { ...EXPERIMENT, name: 'early', early_stop: true, match: { model: 'big' } });
  t.equal(early.status, 201);
  const entered = new Set<string>();
  for (let i = 0; i < 60; i++) {
    const answer = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ model: 'big', user: `early-${i}`, messages: [{ role: 'user', content: 'Hi' }] }) });
    entered.add(answer.headers.get('x-modelgate-experiment')!.split('/')[0]!);
  }
  t.same([...entered], ['early'], 'every request entered the running experiment');
  const finished = await waitFor(() => receiver.accepted.some((r) => r.json.data.name === 'early'), 15_000);
  if (!finished) t.comment(JSON.stringify((await admin(gateway, `/${early.json.id}`)).json, null, 1));
  t.ok(finished, 'finished at its decision');
  t.match(receiver.accepted.find((r) => r.json.data.name === 'early')!.json.data, { reason: 'decision', winner: 'mini' });
  const stopped = await admin(gateway, '', { ...EXPERIMENT, name: 'stopped' });
  t.equal((await admin(gateway, `/${stopped.json.id}/stop`, {})).json.status, 'stopped');
  t.ok(await waitFor(() => receiver.accepted.some((r) => r.json.data.name === 'stopped')), 'a stop is announced');
  t.match(receiver.accepted.find((r) => r.json.data.name === 'stopped')!.json.data, { reason: 'stopped' });
  t.equal(receiver.accepted.filter((r) => r.json.data.name === 'early').length, 1, 'each experiment ends once');
});

t.test('streams and the Responses API enter like chat completions; embeddings never do', async (t) => {
  const gateway = await startGateway(env());
  t.teardown(() => gateway.close());
  t.equal((await admin(gateway, '', { ...EXPERIMENT, name: 'apis', match: {} })).status, 201);
  const client = gateway.client();
  const arms = new Map<string, string>();
  // Arms are assigned by a hash of the experiment's random id and the user: 12 users all land in one
  // arm once in 2048 runs, so more are asked until both arms have been seen (at most 64: 2^-63).
  for (let i = 0; i < 64 && (i < 12 || new Set(arms.values()).size < 2); i++) {
    const user = `api-user-${i}`;
    const chat = await client.chat.completions.create({ model: 'big', user, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    arms.set(user, chat.response.headers.get('x-modelgate-experiment')!);
    const stream = await client.chat.completions.create({ model: 'big', user, stream: true, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    for await (const chunk of stream.data) void chunk;
    t.equal(stream.response.headers.get('x-modelgate-experiment'), arms.get(user), `${user}: a stream gets the same arm`);
    const responses = await client.responses.create({ model: 'big', user, input: 'Hi' }).withResponse();
    t.equal(responses.response.headers.get('x-modelgate-experiment'), arms.get(user), `${user}: so does the Responses API`);
    t.equal(responses.response.headers.get('x-modelgate-model'), arms.get(user)!.endsWith('/mini') ? 'mini' : 'big');
  }
  t.equal(new Set(arms.values()).size, 2, 'both arms served');
  const embedded = await call(gateway.url, '/embeddings', { body: JSON.stringify({ model: 'text-embedding-3-small', input: 'Hi', user: 'api-user-0' }) });
  t.equal(embedded.status, 200);
  t.equal(embedded.headers.get('x-modelgate-experiment'), null, 'embeddings stay out');
});
