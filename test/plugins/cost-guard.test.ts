// The cost guard with the embedded store: the per-request cap and budgets refuse before any
// upstream call, concurrency cannot overshoot a budget, streams and aborted streams are billed,
// spend survives a restart, alert rules fire once, pause and resume, unpriced models, /v1/usage.
import t from 'tap';
import type OpenAI from 'openai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, call, PROTOCOL_ONLY, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, openAIResponder, PROVIDER_KEYS } from '../helpers/fakes.js';
import { fixture, json, fixtureJson, sleep, sse, type FakeProvider } from '../helpers/fake-provider.js';
import { checkError } from '../helpers/schema.js';
import { chatRequest, estimateOf, FIXTURE_COST, near, PRICE, testCatalog } from '../helpers/money.js';
import { estimatePromptTokens, estimateTextTokens } from '../../core/tokens.js';
import type { AlertEvent, BudgetEvent } from '../../core/events.js';
import type { RequestContext } from '../../core/context.js';
import { pino } from 'pino';
import { budgetParts, memoryBudget } from '../helpers/budget.js';
import { usageRoutes } from '../../plugins/cost/usage-route.js';
import { currentPeriods } from '../../plugins/cost/periods.js';

let upstream: FakeProvider;
const catalog = testCatalog();
t.before(async () => {
  upstream = await startFakeOpenAI();
});
t.after(() => upstream.close());
t.beforeEach(() => upstream.reset());

async function gatewayWith(t: Tap, env: Record<string, string>): Promise<TestGateway> {
  const gateway = await startGateway({ ...PROTOCOL_ONLY, OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_MODEL_CATALOG: catalog, ...env });
  t.teardown(() => gateway.close());
  return gateway;
}
type Tap = { teardown(fn: () => unknown): void };

const send = (gateway: TestGateway, body: object) => call(gateway.url, '/chat/completions', { body: JSON.stringify(body) });
const usage = async (gateway: TestGateway, query = '') => (await call(gateway.url, `/usage${query}`)).json;

t.test('a request whose estimate exceeds the per-request cap is refused before any upstream call', async (t) => {
  const gateway = await gatewayWith(t, { MODELGATE_MAX_COST_PER_REQUEST: '0.0001' });
  const refused = await send(gateway, chatRequest(500));
  t.equal(refused.status, 429);
  t.equal(checkError(refused.json), null);
  t.equal(refused.json.error.type, 'insufficient_quota');
  t.equal(refused.json.error.code, 'cost_per_request_exceeded');
  t.equal(refused.json.error.param, 'max_cost_per_request');
  t.match(refused.json.error.message, /over the per-request cost limit of \$0\.0001/);
  t.equal(refused.headers.get('x-should-retry'), 'false');
  t.equal(upstream.requests.length, 0, 'the provider was not called');
  t.equal((await send(gateway, chatRequest(20))).status, 200, 'a smaller request fits');
});

t.test('a request that would pass the daily limit gets 429 insufficient_quota naming the limit and its reset; the provider gets nothing', async (t) => {
  const request = chatRequest(64);
  const gateway = await gatewayWith(t, { MODELGATE_DAILY_COST_LIMIT: String(FIXTURE_COST + estimateOf(request) - 1e-6) });
  t.equal((await send(gateway, request)).status, 200);
  t.equal(upstream.requests.length, 1);
  const refused = await send(gateway, request);
  t.equal(refused.status, 429);
  t.equal(checkError(refused.json), null);
  t.equal(refused.json.error.type, 'insufficient_quota');
  t.equal(refused.json.error.param, 'daily_cost_limit');
  const tomorrow = new Date(Math.floor(Date.now() / 86_400_000 + 1) * 86_400_000).toISOString();
  t.match(refused.json.error.message, /^Daily cost limit of \$[\d.]+ reached: \$0\.000032 spent/);
  t.ok(refused.json.error.message.endsWith(`It resets at ${tomorrow}.`), refused.json.error.message);
  const retryAfter = Number(refused.headers.get('retry-after'));
  t.ok(retryAfter > 0 && retryAfter <= 86_400, `Retry-After ${retryAfter}s is the time to midnight UTC`);
  t.equal(upstream.requests.length, 1, 'the refused request never reached the provider');
});

t.test('the weekly and monthly limits refuse in their own name, resetting with their period', async (t) => {
  const request = chatRequest(64);
  const tight = String(FIXTURE_COST + estimateOf(request) - 1e-6);
  const periods = currentPeriods();
  for (const [setting, param, label, resetsAt] of [
    ['MODELGATE_WEEKLY_COST_LIMIT', 'weekly_cost_limit', 'Weekly', periods.week.resetsAt],
    ['MODELGATE_MONTHLY_COST_LIMIT', 'monthly_cost_limit', 'Monthly', periods.month.resetsAt],
  ] as const) {
    const gateway = await gatewayWith(t, { MODELGATE_DAILY_COST_LIMIT: '1000', MODELGATE_WEEKLY_COST_LIMIT: '1000', MODELGATE_MONTHLY_COST_LIMIT: '1000', [setting]: tight });
    t.equal((await send(gateway, request)).status, 200);
    const refused = await send(gateway, request);
    t.equal(refused.status, 429, setting);
    t.equal(refused.json.error.param, param);
    t.match(refused.json.error.message, new RegExp(`^${label} cost limit of`));
    t.ok(refused.json.error.message.endsWith(`It resets at ${new Date(resetsAt).toISOString()}.`), refused.json.error.message);
  }
});

t.test('a provider that keeps timing out is retried only while the budget holds the calls it may bill', async (t) => {
  const request = chatRequest(64);
  // Every call times out (billed at the estimate); the limit holds two and a half estimates.
  upstream.fallback = async (_recorded, res) => {
    await sleep(1500);
    res.destroy();
  };
  t.teardown(() => void (upstream.fallback = openAIResponder()));
  const gateway = await gatewayWith(t, {
    MODELGATE_DAILY_COST_LIMIT: String(2.5 * estimateOf(request)),
    MODELGATE_TIMEOUT: '300',
    MODELGATE_RETRIES: '3',
    MODELGATE_RETRY_DELAY: '0',
    MODELGATE_CIRCUIT_BREAKER_ENABLED: 'false',
  });
  const refused = await send(gateway, request);
  t.equal(refused.status, 429, 'the third call would not fit the budget');
  t.equal(refused.json.error.param, 'daily_cost_limit');
  t.equal(upstream.requests.length, 2, 'two calls made, not four');
  const day = (await usage(gateway)).budgets.day;
  t.ok(near(day.spent_usd, 2 * estimateOf(request)), `billed the two cut-off calls: $${day.spent_usd}`);
  t.ok(day.spent_usd <= 2.5 * estimateOf(request), 'within the limit');
  t.equal(day.reserved_usd, 0);
});

t.test('20 concurrent requests against a budget that admits 3: three go through, and settled spend stays within limit + one estimate', async (t) => {
  const request = chatRequest(64);
  const estimate = estimateOf(request);
  const limit = 3.5 * estimate;
  const gateway = await gatewayWith(t, { MODELGATE_DAILY_COST_LIMIT: String(limit) });
  // Every answer is held until all 20 were decided, and reports the whole max_tokens as
  // generated: each costs slightly more than its estimate (24 prompt tokens reported vs counted).
  let releaseAll!: () => void;
  const released = new Promise<void>((resolve) => (releaseAll = resolve));
  upstream.fallback = async (recorded, res) => {
    await released;
    return json(200, { ...fixtureJson('openai/chat.json'), usage: { prompt_tokens: 24, completion_tokens: 64, total_tokens: 88 } })(recorded, res);
  };
  t.teardown(() => {
    upstream.fallback = openAIResponder();
  });

  const responses = Promise.all(Array.from({ length: 20 }, () => send(gateway, request)));
  for (let i = 0; i < 200 && upstream.requests.length < 3; i++) await sleep(20);
  releaseAll();
  const statuses = (await responses).map((r) => r.status);
  t.equal(statuses.filter((s) => s === 200).length, 3, 'three admitted');
  t.equal(statuses.filter((s) => s === 429).length, 17, 'seventeen refused');
  t.equal(upstream.requests.length, 3, 'the provider saw only the admitted ones');
  const spent = (await usage(gateway)).budgets.day.spent_usd;
  t.ok(near(spent, 3 * 88 * PRICE), `settled $${spent}`);
  t.ok(spent <= limit + estimate, `settled $${spent} ≤ limit $${limit} + one estimate $${estimate} (overshoot ${(spent / limit - 1) * 100}%)`);
  t.equal((await usage(gateway)).budgets.day.reserved_usd, 0, 'nothing stays reserved');
});

t.test('a stream is billed from its usage, whether or not the client asked for the usage chunk', async (t) => {
  const gateway = await gatewayWith(t, {});
  const stream = await gateway.client().chat.completions.create({ ...chatRequest(64), stream: true } as unknown as OpenAI.ChatCompletionCreateParamsStreaming);
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  t.equal(text, 'The capital of France is Paris.');
  for (let i = 0; i < 100 && (await usage(gateway)).budgets.day.requests === 0; i++) await sleep(20);
  const day = (await usage(gateway)).budgets.day;
  t.ok(near(day.spent_usd, FIXTURE_COST), `billed $${day.spent_usd}`);
  t.equal(day.prompt_tokens, 24);
  t.equal(day.completion_tokens, 8);
});

t.test('a client that leaves mid-stream is billed for the prompt and what was generated', async (t) => {
  const gateway = await gatewayWith(t, {});
  const request = chatRequest(64);
  // Content arrives slowly and the usage chunk never does.
  upstream.next(sse(fixture('openai/stream.sse'), { delayMs: 150, stopAfter: 4 }));
  const controller = new AbortController();
  const stream = await gateway.client().chat.completions.create({ ...request, stream: true } as unknown as OpenAI.ChatCompletionCreateParamsStreaming, { signal: controller.signal });
  try {
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) controller.abort();
  } catch {
    // the SDK ends the loop or throws APIUserAbortError
  }
  for (let i = 0; i < 100 && (await usage(gateway)).budgets.day.requests === 0; i++) await sleep(20);
  const day = (await usage(gateway)).budgets.day;
  const prompt = estimatePromptTokens(request);
  t.equal(day.requests, 1);
  t.equal(day.prompt_tokens, prompt, 'the prompt, counted');
  t.ok(day.completion_tokens >= 1 && day.completion_tokens <= estimateTextTokens('The capital of France is Paris.'), `${day.completion_tokens} generated tokens counted`);
  t.ok(near(day.spent_usd, (prompt + day.completion_tokens) * PRICE), `billed $${day.spent_usd}`);
});

t.test('a request that fails before any content is not billed, and its reservation is released', async (t) => {
  const gateway = await gatewayWith(t, { MODELGATE_RETRIES: '0', MODELGATE_FAILOVER_ENABLED: 'false' });
  upstream.next(json(500, fixtureJson('openai/error-500.json')));
  const failed = await send(gateway, chatRequest(64));
  t.ok(failed.status >= 500);
  const day = (await usage(gateway)).budgets.day;
  t.equal(day.spent_usd, 0);
  t.equal(day.reserved_usd, 0);
});

t.test('spend survives a restart on the same data directory and still counts against the limit', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-restart-'));
  const request = chatRequest(64);
  const env = { MODELGATE_DATA_DIR: dir, MODELGATE_DAILY_COST_LIMIT: String(2 * FIXTURE_COST + estimateOf(request) - 1e-6) };
  const first = await startGateway({ ...PROTOCOL_ONLY, OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_MODEL_CATALOG: catalog, ...env });
  t.equal((await send(first, request)).status, 200);
  t.equal((await send(first, request)).status, 200);
  await first.close();

  const second = await gatewayWith(t, env);
  const after = await usage(second);
  t.ok(near(after.budgets.day.spent_usd, 2 * FIXTURE_COST), `reloaded $${after.budgets.day.spent_usd}`);
  t.ok(near(after.budgets.month.spent_usd, 2 * FIXTURE_COST));
  t.equal(after.budgets.day.requests, 2, 'usage rollups survived too');
  t.equal((await send(second, request)).status, 429, 'the reloaded spend is enforced');

  const told: BudgetEvent[] = [];
  second.app.deps.events.on('budget', (event) => told.push(event));
  for (let i = 0; i < 50 && told.length < 3; i++) await sleep(10);
  t.same(
    told.map((event) => event.period),
    ['day', 'week', 'month'],
    'a late listener (the metrics) is told where each budget stands at once',
  );
  t.ok(near(told[0]!.spentUsd, 2 * FIXTURE_COST));
});

t.test('alert rules fire once per period; pause refuses until an admin resumes', async (t) => {
  const request = chatRequest(64);
  // 0.25 after the third request, 0.4 (pause) after the fourth.
  const gateway = await gatewayWith(t, { MODELGATE_DAILY_COST_LIMIT: String(10 * FIXTURE_COST), MODELGATE_ALERT_RULES: '0.25:email,0.4:pause', MODELGATE_WEEKLY_COST_LIMIT: '1000', MODELGATE_MONTHLY_COST_LIMIT: '1000' });
  const alerts: AlertEvent[] = [];
  gateway.app.deps.events.on('alert', (event) => alerts.push(event));
  for (let i = 0; i < 4; i++) t.equal((await send(gateway, request)).status, 200, `request ${i + 1}`);
  t.same(
    alerts.map((a) => [a.action, a.threshold, a.period]),
    [
      ['email', 0.25, 'day'],
      ['pause', 0.4, 'day'],
    ],
  );
  t.match(alerts[1], { kind: 'budget.threshold', period_key: /^\d{4}-\d{2}-\d{2}$/, resets_at: /T00:00:00\.000Z$/ });
  t.ok(near(alerts[1]!.limit_usd as number, 10 * FIXTURE_COST));

  const paused = await send(gateway, request);
  t.equal(paused.status, 429);
  t.equal(paused.json.error.code, 'budget_paused');
  t.match(paused.json.error.message, /^Spending is paused: the daily budget reached 40% of its limit\. Paused until \d{4}-\d{2}-\d{2}T00:00:00\.000Z/);
  t.equal((await usage(gateway)).paused.threshold, 0.4);

  const resumed = await call(gateway.url, '/budget/resume', { method: 'POST' });
  t.same(resumed.json, { resumed: true, paused: null });
  t.equal((await send(gateway, request)).status, 200, 'admitted after the resume');
  t.equal((await send(gateway, request)).status, 200);
  t.equal(alerts.length, 2, 'no threshold fired twice in the period, so no new pause');
  t.equal((await usage(gateway)).paused, null);
});

t.test('with MODELGATE_ALERTS_ENABLED=false no rule fires and nothing pauses', async (t) => {
  const gateway = await gatewayWith(t, { MODELGATE_ALERTS_ENABLED: 'false', MODELGATE_ALERT_RULES: '0.01:pause', MODELGATE_DAILY_COST_LIMIT: '0.001' });
  const alerts: AlertEvent[] = [];
  gateway.app.deps.events.on('alert', (event) => alerts.push(event));
  for (let i = 0; i < 3; i++) t.equal((await send(gateway, chatRequest(64))).status, 200);
  t.equal(alerts.length, 0);
  t.equal((await usage(gateway)).paused, null);
});

t.test('a model without a price is refused unless allowed, then billed at the configured default', async (t) => {
  const refusing = await gatewayWith(t, {});
  const refused = await send(refusing, { ...chatRequest(64), model: 'mystery-1' });
  t.equal(refused.status, 403);
  t.equal(refused.json.error.code, 'model_unpriced');
  t.equal(upstream.requests.length, 0);

  const allowing = await gatewayWith(t, { MODELGATE_ALLOW_UNPRICED_MODELS: 'true', MODELGATE_UNPRICED_INPUT_PRICE: '10', MODELGATE_UNPRICED_OUTPUT_PRICE: '30' });
  t.equal((await send(allowing, { ...chatRequest(64), model: 'mystery-1' })).status, 200);
  const spent = (await usage(allowing)).budgets.day.spent_usd;
  t.ok(near(spent, 24 * 10e-6 + 8 * 30e-6), `billed $${spent}, never $0`);
});

t.test('GET /v1/usage reports each budget, counts and cost per model, and filters a date range', async (t) => {
  const gateway = await gatewayWith(t, { MODELGATE_DAILY_COST_LIMIT: '1', MODELGATE_WEEKLY_COST_LIMIT: '5', MODELGATE_MONTHLY_COST_LIMIT: '20' });
  for (let i = 0; i < 2; i++) t.equal((await send(gateway, chatRequest(64))).status, 200);
  const report = await usage(gateway);
  t.equal(report.object, 'usage');
  for (const [name, limit] of [['day', 1], ['week', 5], ['month', 20]] as const) {
    const budget = report.budgets[name];
    t.equal(budget.limit_usd, limit, `${name} limit`);
    t.ok(near(budget.spent_usd, 2 * FIXTURE_COST), `${name} spent`);
    t.ok(near(budget.remaining_usd, limit - 2 * FIXTURE_COST), `${name} remaining`);
    t.equal(budget.requests, 2);
    t.same(budget.by_model.map((m: { provider: string; model: string; requests: number }) => [m.provider, m.model, m.requests]), [['openai', 'gpt-4o-mini', 2]]);
    t.match(budget.resets_at, /T00:00:00\.000Z$/);
  }
  const today = new Date().toISOString().slice(0, 10);
  const ranged = await usage(gateway, `?from=${today}&to=${today}`);
  t.equal(ranged.range.requests, 2);
  t.same(ranged.range.by_key.map((k: { key_id: string }) => k.key_id), ['bootstrap']);
  t.equal((await usage(gateway, '?from=2000-01-01&to=2000-01-31')).range.requests, 0);
  const bad = await call(gateway.url, '/usage?from=yesterday');
  t.equal(bad.status, 400);
  t.equal(bad.json.error.param, 'from');
});

t.test('only an admin key may resume spending (the bootstrap key is the only key yet, so the route is driven directly)', async (t) => {
  const parts = await budgetParts(t);
  const budget = await memoryBudget(t, parts);
  const day = currentPeriods().day;
  await budget.fireOnce(day, '1:pause', { period: 'day', periodKey: day.key, threshold: 1, until: day.resetsAt });
  const resume = usageRoutes(budget, parts, { day: 1, week: 1, month: 1 }).find((route) => route.path === '/v1/budget/resume')!;
  const ctx = { principal: { keyId: 'k1', tenant: 't1', admin: false }, log: pino({ level: 'silent' }) } as unknown as RequestContext;
  const refused = await resume.handle(ctx).then(
    () => undefined,
    (error: unknown) => error as { kind?: string; status?: number },
  );
  t.equal(refused?.kind, 'admin_required');
  t.equal(refused?.status, 403);
  t.ok((await budget.snapshot(currentPeriods())).pause, 'still paused');
});

t.test('a malformed alert rule fails startup naming the variable', async (t) => {
  const error = await startGateway({ MODELGATE_ALERT_RULES: '0.5:email,0.9:sms' }).then(
    async (gateway) => gateway.close(),
    (thrown: unknown) => thrown,
  );
  t.match((error as Error | undefined)?.message, /MODELGATE_ALERT_RULES: must be threshold:action pairs/);
});

t.end();
