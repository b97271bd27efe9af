// An arm that fails counts as failing: its provider's 429s (or any answer that is not a success,
// other than the gateway's own rate limit and the client leaving) count in its error rate, so the
// error-rate guardrail holds it back — it does not look error-free and cheap because it never
// answered. And a failover away from the arm's model counts against the arm.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, startGateway } from '../helpers/gateway.js';
import { FakeProvider, json } from '../helpers/fake-provider.js';
import { openAIResponder, PROVIDER_KEYS } from '../helpers/fakes.js';
import { waitFor } from '../helpers/receivers.js';
import { failedForArm } from '../../plugins/experiments/exposure-row.js';
import { GatewayError } from '../../core/errors.js';
import type { RequestContext } from '../../core/context.js';

const ok = openAIResponder(PROVIDER_KEYS.openai);
const upstream = await FakeProvider.start((request, res) => {
  if (request.json?.model === 'gpt-4o-mini') return json(429, { error: { message: 'slow down', type: 'rate_limit_error' } })(request, res);
  return ok(request, res);
});
t.teardown(() => upstream.close());

const file = join(mkdtempSync(join(tmpdir(), 'modelgate-ab-')), 'models.json');
const model = (id: string, native: string, price: number) => ({ provider: 'openai', id, native_id: native, price: { input: price, output: price }, quality: { score: 0.9 } });
writeFileSync(file, JSON.stringify({ models: [model('big', 'gpt-4o', 1e-6), model('mini', 'gpt-4o-mini', 1e-7)] }));

t.test('an arm whose provider refuses every request is all errors, and does not win on cost', async (t) => {
  const gateway = await startGateway({
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_MODEL_CATALOG: file,
    MODELGATE_CACHE_ENABLED: 'false',
    MODELGATE_AB_TESTING_ENABLED: 'true',
    MODELGATE_RETRIES: '0',
  });
  t.teardown(() => gateway.close());
  const created = await call(gateway.url, '/admin/experiments', { body: JSON.stringify({ name: 'e', match: { model: 'big' }, arms: [{ name: 'control', model: 'big' }, { name: 'mini', model: 'mini' }], metrics: ['cost'], guardrails: ['error_rate'] }) });
  t.equal(created.status, 201);
  const statuses: Record<string, number[]> = { control: [], mini: [] };
  for (let i = 0; i < 60; i++) {
    const answer = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ model: 'big', user: `u${i}`, messages: [{ role: 'user', content: 'Hi' }] }) });
    statuses[answer.headers.get('x-modelgate-experiment')!.split('/')[1]!]!.push(answer.status);
  }
  t.ok(statuses.mini!.length >= 10 && statuses.mini!.every((s) => s === 429), 'every mini request failed upstream');
  let results: any;
  t.ok(await waitFor(async () => {
    results = (await call(gateway.url, `/admin/experiments/${created.json.id}`)).json.results;
    return results.arms[1].requests === statuses.mini!.length;
  }, 5000));
  const [control, mini] = results.arms;
  t.equal(mini.error_rate, 1, 'every one of its requests counts as an error');
  t.equal(control.error_rate, 0);
  t.match(results.decision.guardrail_breaches, [{ arm: 'mini', metric: 'error_rate' }]);
  t.not(results.decision.winner, 'mini', 'an arm that never answered does not win on cost');
});

t.test('what counts against an arm', async (t) => {
  const ctx = (status: number, code?: string, interrupted?: 'upstream_error' | 'client_abort') =>
    ({ status, error: code ? new GatewayError(code as never) : undefined, outcome: { interrupted } }) as unknown as RequestContext;
  t.notOk(failedForArm(ctx(200), false), 'an answer');
  t.ok(failedForArm(ctx(200), true), 'an answer from another model (failed over)');
  t.ok(failedForArm(ctx(200, undefined, 'upstream_error'), false), 'a stream the provider broke');
  t.ok(failedForArm(ctx(429, 'provider_rate_limited'), false), "the provider's rate limit");
  t.ok(failedForArm(ctx(503, 'provider_unavailable'), false));
  t.ok(failedForArm(ctx(429, 'cost_limit_exceeded'), false), 'a budget the arm spent');
  t.ok(failedForArm(ctx(400, 'bad_request'), false), "the model's own refusal");
  t.notOk(failedForArm(ctx(429, 'rate_limit_exceeded'), false), "the gateway's rate limit is the key's doing");
  t.notOk(failedForArm(ctx(499, undefined, 'client_abort'), false), 'the client leaving');
});
