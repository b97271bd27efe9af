// What bounds a request's failover, end to end on the two fake providers of the failover tests: a
// client may lower the retry counts, never raise them; the client's named fallbacks are reached
// within the operator's limit even behind auto's long ranking; a client that leaves during a backoff
// is let go at once; the final answer when every candidate timed out or refused the gateway's
// credentials; and an error the request caused is not held against the provider.
import t from 'tap';
import { call } from '../helpers/gateway.js';
import { estimatePromptTokens } from '../../core/tokens.js';
import { hang, sleep } from '../helpers/fake-provider.js';
import { ask, body, failing, poll, startDuo } from '../helpers/failover.js';

const { primary, secondary, catalog, withGateway } = await startDuo(t);

const serverError = () => failing(500, 'openai/error-500.json');
const statusOf = async (url: string, provider: string) => (await call(url, '/providers/status')).json.data.find((p: { provider: string }) => p.provider === provider);

t.test('a client may lower the retry counts, never raise them above the operator settings', async (t) => {
  const alone = { CUSTOM_BASE_URL: '', MODELGATE_RETRIES: '1', MODELGATE_RETRY_DELAY: '0' };
  await withGateway(alone, async (gateway) => {
    const asks: Array<[string, { body?: object; headers?: Record<string, string> }, number]> = [
      ['retry.retry_attempts 50 in the body', { body: { retry: { retry_attempts: 50 } } }, 2],
      ['x-modelgate-retry-attempts: 50', { headers: { 'x-modelgate-retry-attempts': '50' } }, 2],
      ['retry.retry_attempts 0', { body: { retry: { retry_attempts: 0 } } }, 1],
    ];
    for (const [name, override, calls] of asks) {
      primary.reset();
      primary.next(...Array.from({ length: 5 }, serverError));
      const refused = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ ...ask, modelgate: override.body }), headers: override.headers });
      t.equal(refused.status, 503, `${name}: refused`);
      t.equal(primary.requests.length, calls, `${name}: ${calls} calls (MODELGATE_RETRIES=1)`);
    }
  });
  await withGateway({ MODELGATE_RETRIES: '0', MODELGATE_FAILOVER_RETRIES: '0' }, async (gateway) => {
    primary.next(serverError());
    const refused = await call(gateway.url, '/chat/completions', { body, headers: { 'x-modelgate-failover-retries': '5' } });
    t.equal(refused.status, 503, 'failover.retry_attempts 5 with MODELGATE_FAILOVER_RETRIES=0: no failover');
    t.equal(secondary.requests.length, 0);
  });
  primary.reset();
  await withGateway({ MODELGATE_RETRIES: '0', MODELGATE_FAILOVER_RETRIES: '3' }, async (gateway) => {
    primary.next(serverError());
    const refused = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ ...ask, modelgate: { failover: { retry_attempts: 0 } } }) });
    t.equal(refused.status, 503, 'failover.retry_attempts 0 lowers the operator setting');
    t.equal(secondary.requests.length, 0);
  });
});

t.test("with auto, the client's fallbacks are tried within MODELGATE_FAILOVER_RETRIES, however long the ranking", async (t) => {
  // auto ranks openai's four models first (cheapest); custom's `weak` is below the quality
  // threshold (auto leaves it out) and `dear` is ranked last.
  const file = catalog('long-ranking.json', [
    ...[1, 2, 3, 4].map((n) => ({ provider: 'openai', id: `cheap-${n}`, price: n * 1e-8 })),
    { provider: 'custom', id: 'weak', price: 1e-8, quality: 0.5 },
    { provider: 'custom', id: 'dear', price: 1e-6 },
  ]);
  const failingFallback = primary.fallback;
  primary.fallback = serverError();
  t.teardown(() => {
    primary.fallback = failingFallback;
  });
  const cases: Array<[string, object, string | undefined, number]> = [
    ['a fallback model auto leaves out', { fallback_models: ['weak'] }, 'weak', 2],
    ['a fallback model ranked after the cut', { fallback_models: ['dear'] }, 'dear', 2],
    ["a fallback provider (its best fit)", { fallback_providers: ['custom'] }, 'dear', 2],
    ['no fallbacks: three of the ranking, then the answer that all failed', {}, undefined, 3],
  ];
  await withGateway({ MODELGATE_MODEL_CATALOG: file, MODELGATE_RETRIES: '0', MODELGATE_FAILOVER_RETRIES: '2' }, async (gateway) => {
    for (const [name, failover, model, primaryCalls] of cases) {
      primary.reset();
      secondary.reset();
      const response = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ ...ask, model: 'auto', modelgate: { failover } }) });
      t.equal(response.status, model ? 200 : 503, `${name}: status`);
      if (model) t.equal(response.headers.get('x-modelgate-model'), model, `${name}: answered by`);
      t.same(primary.requests.map((r) => r.json.model), ['cheap-1', 'cheap-2', 'cheap-3'].slice(0, primaryCalls), `${name}: the ranking's best came first`);
      t.equal(secondary.requests.length, model ? 1 : 0, `${name}: calls to the fallback`);
    }
  });
});

t.test('an error the request caused is not held against the provider', async (t) => {
  primary.next(failing(400, 'anthropic/error-400.json'));
  await withGateway({}, async (gateway) => {
    await t.rejects(gateway.client().chat.completions.create(ask), { status: 400, message: /prompt is too long/ });
    const openai = await statusOf(gateway.url, 'openai');
    t.match(openai, { requests: 0, success_rate: null, last_error: null, state: 'unknown' }, "no failure recorded, no other tenant's error text shown");
    await gateway.client().chat.completions.create(ask);
    t.match(await statusOf(gateway.url, 'openai'), { requests: 1, success_rate: 1 }, 'its answers still are');
  });
});

t.test('every candidate timing out: 503 with code upstream_timeout', async (t) => {
  primary.next(hang());
  secondary.next(hang(), hang());
  await withGateway({ MODELGATE_TIMEOUT: '300' }, async (gateway) => {
    const response = await call(gateway.url, '/chat/completions', { body });
    t.equal(response.status, 503);
    t.match(response.json.error, { message: 'Provider unavailable', code: 'upstream_timeout' });
    t.equal(primary.requests.length, 1, 'a timeout is not retried while another candidate is left');
    t.equal(secondary.requests.length, 2, 'on the last candidate it is');
  });
});

t.test("every provider refusing the gateway's credentials: 502, nothing retried", async (t) => {
  primary.next(failing(401, 'openai/error-401.json'));
  secondary.next(failing(401, 'openai/error-401.json'));
  await withGateway({}, async (gateway) => {
    const response = await call(gateway.url, '/chat/completions', { body });
    t.equal(response.status, 502, "the operator's to fix, not the client's");
    t.equal(primary.requests.length, 1);
    t.equal(secondary.requests.length, 1);
  });
});

t.test('a client that leaves during a retry backoff is let go at once; no further call is made', async (t) => {
  const BACKOFF_MS = 4000;
  primary.next(serverError());
  const settings = { CUSTOM_BASE_URL: '', MODELGATE_RATE_LIMITING_ENABLED: 'false', MODELGATE_RETRY_DELAY: String(BACKOFF_MS), MODELGATE_EXPONENTIAL_BACKOFF: 'false' };
  await withGateway(settings, async (gateway) => {
    const reserved = async (): Promise<number> => (await call(gateway.url, '/usage')).json.budgets.day.reserved_usd;
    const client = new AbortController();
    const pending = gateway.client().chat.completions.create(ask, { signal: client.signal }).catch((error: Error) => error);
    const firstCall = Date.now();
    t.ok(await poll(async () => primary.requests.length === 1), 'the first call failed');
    await sleep(200); // its 500 handled: the request waits out the backoff
    t.ok((await reserved()) > 0, 'the request holds its cost reservation');
    client.abort();
    await pending;
    const left = Date.now();
    t.ok(await poll(async () => (await reserved()) === 0), 'the request ended');
    const took = Date.now() - left;
    t.ok(took < BACKOFF_MS / 2, `and released its reservation ${took} ms after the client left, not at the end of the backoff`);
    await sleep(Math.max(0, firstCall + BACKOFF_MS + 500 - Date.now()));
    t.equal(primary.requests.length, 1, 'the backoff ended without a retry');
  });
});

t.test('a client that leaves while a call is in flight: that call is still billed at its estimate', async (t) => {
  primary.next(hang());
  await withGateway({ CUSTOM_BASE_URL: '', MODELGATE_RATE_LIMITING_ENABLED: 'false', MODELGATE_TIMEOUT: '10000' }, async (gateway) => {
    const asked = { ...ask, max_tokens: 10 };
    const client = new AbortController();
    const pending = gateway.client().chat.completions.create(asked, { signal: client.signal }).catch((error: Error) => error);
    t.ok(await poll(async () => primary.requests.length === 1), 'the call reached the provider');
    client.abort();
    await pending;
    const day = async () => (await call(gateway.url, '/usage')).json.budgets.day;
    t.ok(await poll(async () => (await day()).reserved_usd === 0), 'the request ended');
    const estimate = (estimatePromptTokens(asked as never) + 10) * 1e-7;
    const spent = (await day()).spent_usd;
    t.ok(Math.abs(spent - estimate) < 1e-9, `billed $${spent}, the estimate is $${estimate}`);
  });
});

t.end();
