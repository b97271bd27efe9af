// What failed upstream calls cost (plugins/cost/attempts.ts): a call the gateway cut off while the
// provider worked — it timed out, or the client left while it was in flight — is billed at its
// estimate; a call the provider refused (an HTTP error status) or that never reached it is free;
// so is a target the client left while the gateway waited to fail over.
//
// The cost guard's step of a real gateway is driven by a stand-in for the failover step that
// reports each failed call on `outcome.failedAttempts`, as the failover step is to report them.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { startGateway, call, PROTOCOL_ONLY, type TestGateway } from '../helpers/gateway.js';
import { near } from '../helpers/money.js';
import { newOutcome, type ChatState, type RequestContext, type Target } from '../../core/context.js';
import { recordUsage } from '../../core/attempt.js';
import type { FailureReason } from '../../core/upstream-error.js';
import type { ChatCompletion } from '../../core/chat-types.js';
import type { Step } from '../../core/pipeline.js';
import '../../plugins/cost/attempts.js';

/** USD per token of the two test models. */
const PRICE = { alpha: 1e-6, beta: 2e-6 };
/** The chat request's counted prompt and expected output: its estimate is 150 tokens. */
const PROMPT = 100;
const OUTPUT = 50;
const estimate = (model: keyof typeof PRICE) => (PROMPT + OUTPUT) * PRICE[model];
/** The answer reports 24 prompt and 8 completion tokens. */
const answerCost = (model: keyof typeof PRICE) => 32 * PRICE[model];

const catalog = join(mkdtempSync(join(tmpdir(), 'modelgate-attempts-')), 'models.json');
writeFileSync(
  catalog,
  JSON.stringify({
    models: [
      { provider: 'openai', id: 'alpha', price: { input: PRICE.alpha, output: PRICE.alpha } },
      { provider: 'openai', id: 'beta', price: { input: PRICE.beta, output: PRICE.beta } },
    ],
  }),
);

type Call = FailureReason | 'client_abort' | 'answer';

interface Run {
  gateway: TestGateway;
  step: Step;
  target(model: keyof typeof PRICE): Target;
}

async function run(t: { teardown(fn: () => unknown): void }, env: Record<string, string> = {}): Promise<Run> {
  const gateway = await startGateway({ ...PROTOCOL_ONLY, OPENAI_API_KEY: 'sk-test', MODELGATE_MODEL_CATALOG: catalog, ...env });
  t.teardown(() => gateway.close());
  const step = gateway.app.plugins.find((plugin) => plugin.name === 'cost-guard')!.step!;
  const provider = gateway.app.providers.get('openai')!;
  return { gateway, step, target: (model) => ({ provider, model: gateway.app.catalog.get('openai', model)! }) };
}

const completion: ChatCompletion = {
  id: 'c1',
  object: 'chat.completion',
  created: 0,
  model: 'alpha',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Paris.', refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 24, completion_tokens: 8, total_tokens: 32 },
};

/**
 * Sends one request through the cost guard's step; behind it, a stand-in for the failover step
 * walks `plan` — per target, its calls in order — reporting each failed call before the next call
 * or target. `leaveAfter` ends the request as a client that leaves after that many targets.
 */
async function request(r: Run, plan: Array<[Target, Call[]]>, leaveAfter?: number): Promise<void> {
  const client = new AbortController();
  const chat = { body: { model: 'alpha', messages: [] }, overrides: {}, stream: false, includeUsage: false, maxOutputTokens: OUTPUT, expectedOutputTokens: OUTPUT, promptTokens: PROMPT, promptTokensUpperBound: PROMPT } as unknown as ChatState;
  const ctx = {
    id: 'r1',
    chat,
    principal: { keyId: 'bootstrap', tenant: 'default', admin: true },
    outcome: newOutcome(),
    beforeAttempt: [],
    beforeRetry: [],
    signal: client.signal,
    log: pino({ level: 'silent' }),
    responseHeaders: {},
    res: { statusCode: 200 },
    startedAt: performance.now(),
  } as unknown as RequestContext;
  await r.step.handle(ctx, async () => {
    for (const [i, [target, calls]] of plan.entries()) {
      if (leaveAfter === i) {
        client.abort(); // during the failover delay: no call in flight
        return;
      }
      ctx.outcome.target = target;
      for (const hook of ctx.beforeAttempt) await hook(target);
      for (const [call, outcome] of calls.entries()) {
        if (call > 0) for (const hook of ctx.beforeRetry) await hook(target);
        ctx.outcome.attempts++;
        if (outcome === 'answer') {
          ctx.outcome.completion = completion;
          recordUsage(ctx, target, completion.usage);
          return;
        }
        if (outcome === 'client_abort') client.abort();
        (ctx.outcome.failedAttempts ??= []).push({ target, reason: outcome, upstreamStatus: outcome === 'http_status' ? 500 : 0 });
        if (outcome === 'client_abort') return;
      }
    }
  });
}

async function day(r: Run) {
  return (await call(r.gateway.url, '/usage')).json.budgets.day;
}

t.test('a call that timed out is billed at its estimate; the target that answered, at its usage', async (t) => {
  const r = await run(t);
  await request(r, [
    [r.target('alpha'), ['timeout']],
    [r.target('beta'), ['answer']],
  ]);
  const budget = await day(r);
  t.ok(near(budget.spent_usd, estimate('alpha') + answerCost('beta')), `spent $${budget.spent_usd}`);
  t.equal(budget.reserved_usd, 0);
  t.equal(budget.requests, 1, 'one request');
  const byModel = Object.fromEntries(budget.by_model.map((m: { model: string }) => [m.model, m]));
  t.match(byModel.alpha, { requests: 0, prompt_tokens: 0, completion_tokens: 0 }, 'the timed-out target shows its cost, not a request');
  t.ok(near(byModel.alpha.cost_usd, estimate('alpha')));
  t.match(byModel.beta, { requests: 1, prompt_tokens: 24, completion_tokens: 8 });
  t.ok(near(budget.cost_usd, budget.spent_usd), 'usage costs add up to the spend');
});

t.test('a retry that answers after a timeout on the same target: both are billed', async (t) => {
  const r = await run(t);
  await request(r, [[r.target('alpha'), ['timeout', 'answer']]]);
  t.ok(near((await day(r)).spent_usd, estimate('alpha') + answerCost('alpha')));
});

t.test('retries after timeouts reserve another estimate each: a budget that cannot hold one ends the request within the limit', async (t) => {
  // The limit holds two and a half estimates: two timed-out calls fit, a third may not start.
  const r = await run(t, { MODELGATE_DAILY_COST_LIMIT: String(2.5 * estimate('alpha')) });
  const refused = await request(r, [[r.target('alpha'), ['timeout', 'timeout', 'timeout', 'answer']]]).then(
    () => undefined,
    (error: { status?: number; param?: string }) => error,
  );
  t.match(refused, { status: 429, param: 'daily_cost_limit' }, 'the third call was refused before it was made');
  const budget = await day(r);
  t.ok(near(budget.spent_usd, 2 * estimate('alpha')), `spent $${budget.spent_usd}: the two calls made`);
  t.ok(budget.spent_usd <= 2.5 * estimate('alpha'), 'within the limit');
  t.equal(budget.reserved_usd, 0, 'every reservation released or settled');
});

t.test('a retry after a 5xx needs no further reservation (it is not billed)', async (t) => {
  const r = await run(t, { MODELGATE_DAILY_COST_LIMIT: String(1.5 * estimate('alpha')) });
  await request(r, [[r.target('alpha'), ['http_status', 'http_status', 'answer']]]);
  t.ok(near((await day(r)).spent_usd, answerCost('alpha')));
});

t.test('a call the provider refused with an error status, or that never reached it, is free', async (t) => {
  const r = await run(t);
  await request(r, [
    [r.target('alpha'), ['http_status', 'connection']],
    [r.target('beta'), ['answer']],
  ]);
  const budget = await day(r);
  t.ok(near(budget.spent_usd, answerCost('beta')), `spent $${budget.spent_usd}`);
  t.equal(budget.reserved_usd, 0);
});

t.test('a request whose every target timed out is billed their estimates', async (t) => {
  const r = await run(t);
  await request(r, [
    [r.target('alpha'), ['timeout']],
    [r.target('beta'), ['timeout']],
  ]);
  const budget = await day(r);
  t.ok(near(budget.spent_usd, estimate('alpha') + estimate('beta')), `spent $${budget.spent_usd}`);
  t.equal(budget.requests, 1);
});

t.test('a client that leaves while a call is in flight: that call is billed at its estimate', async (t) => {
  const r = await run(t);
  await request(r, [[r.target('alpha'), ['client_abort']]]);
  const budget = await day(r);
  t.ok(near(budget.spent_usd, estimate('alpha')), `spent $${budget.spent_usd}`);
  t.equal(budget.reserved_usd, 0);
});

t.test('a client that leaves while the gateway waits to fail over from a 5xx: nothing is billed', async (t) => {
  const r = await run(t);
  await request(
    r,
    [
      [r.target('alpha'), ['http_status']],
      [r.target('beta'), ['answer']],
    ],
    1,
  );
  const budget = await day(r);
  t.equal(budget.spent_usd, 0, 'the target that answered 500 is not billed');
  t.equal(budget.reserved_usd, 0, 'and its reservation is released');
  t.equal(budget.requests, 1);
});
