// The circuit breaker end to end, on the two fake providers of the failover tests: it opens after
// the threshold and lets one probe through after the recovery timeout; a probe without a verdict
// keeps it open; it counts only calls really made and only provider-side failures; turned off, every
// configured provider shows `disabled` from the start.
import t from 'tap';
import { call } from '../helpers/gateway.js';
import { openAIResponder, PROVIDER_KEYS } from '../helpers/fakes.js';
import { hang, sleep } from '../helpers/fake-provider.js';
import { ask, body, failing, poll, startDuo } from '../helpers/failover.js';

const { primary, secondary, withGateway } = await startDuo(t);

const circuitOf = async (url: string, provider: string) => (await call(url, '/providers/status')).json.data.find((p: { provider: string }) => p.provider === provider);

t.test('the breaker: opens after the threshold, keeps the provider out, lets one probe through after the recovery timeout, closes', async (t) => {
  await withGateway({ MODELGATE_CIRCUIT_BREAKER_THRESHOLD: '2', MODELGATE_CIRCUIT_BREAKER_TIMEOUT: '400', MODELGATE_RETRIES: '0' }, async (gateway) => {
    const circuit = async () => (await call(gateway.url, '/providers/status')).json.data.find((p: { provider: string }) => p.provider === 'openai');
    primary.next(failing(500, 'openai/error-500.json'), failing(500, 'openai/error-500.json'));
    await gateway.client().chat.completions.create(ask);
    t.equal((await circuit()).circuit, 'closed', 'one failure is below the threshold');
    await gateway.client().chat.completions.create(ask);
    t.match(await circuit(), { circuit: 'open', state: 'down' }, 'two consecutive failures open it');

    const { response } = await gateway.client().chat.completions.create(ask).withResponse();
    t.equal(response.headers.get('x-modelgate-provider'), 'custom');
    t.equal(primary.requests.length, 2, 'an open circuit keeps the provider out');

    await sleep(450);
    const probe = await gateway.client().chat.completions.create(ask).withResponse();
    t.equal(probe.response.headers.get('x-modelgate-provider'), 'openai', 'after the recovery timeout one probe goes through');
    t.equal((await circuit()).circuit, 'closed', 'and its success closes the circuit');
  });
});

t.test('a half-open probe whose client leaves keeps the circuit open; a request waiting on the probe is cancelled by its client too', async (t) => {
  // One provider: the request behind a probe is on its last candidate, so it waits for the probe.
  const polling = { MODELGATE_RATE_LIMITING_ENABLED: 'false' }; // the test polls the gateway's own endpoints
  await withGateway({ ...polling, CUSTOM_BASE_URL: '', MODELGATE_CIRCUIT_BREAKER_THRESHOLD: '1', MODELGATE_CIRCUIT_BREAKER_TIMEOUT: '300', MODELGATE_RETRIES: '0', MODELGATE_TIMEOUT: '60000' }, async (gateway) => {
    const openai = async () => (await call(gateway.url, '/providers/status')).json.data.find((p: { provider: string }) => p.provider === 'openai');
    const reserved = async (): Promise<number> => (await call(gateway.url, '/usage')).json.budgets.day.reserved_usd;
    primary.next(failing(500, 'openai/error-500.json'), hang());
    await t.rejects(gateway.client().chat.completions.create(ask), { status: 503, message: 'Provider unavailable' });
    t.equal((await openai()).circuit, 'open');
    t.ok(await poll(async () => (await openai()).state !== 'down'), 'the recovery timeout passed');

    // The probe: the provider is still dead (hangs), and the probe's client leaves.
    const probeClient = new AbortController();
    const probe = gateway.client().chat.completions.create(ask, { signal: probeClient.signal }).catch((e: Error) => e);
    t.ok(await poll(async () => primary.requests.length === 2), 'the probe reached the provider');
    t.equal((await openai()).circuit, 'half_open');
    const one = await reserved();

    // A request behind it waits for the probe; its client leaves too.
    const waiterClient = new AbortController();
    const waiter = gateway.client().chat.completions.create(ask, { signal: waiterClient.signal }).catch((e: Error) => e);
    t.ok(await poll(async () => (await reserved()) > one), 'the second request is waiting (its estimate is reserved)');
    waiterClient.abort();
    await waiter;
    t.ok(await poll(async () => (await reserved()) <= one), 'the waiting request ended when its client left, while the probe still runs');

    probeClient.abort();
    await probe;
    t.ok(await poll(async () => primary.aborted === 1), 'the probe was closed upstream');
    t.ok(await poll(async () => (await reserved()) === 0), 'both requests finished');
    await sleep(200);
    t.equal(primary.requests.length, 2, 'the request that waited on the probe never called the provider');
    t.equal((await openai()).circuit, 'open', 'a probe without a verdict leaves the circuit open');

    // The provider is back: the next request probes and its success closes the circuit.
    const { response } = await gateway.client().chat.completions.create(ask).withResponse();
    t.equal(response.headers.get('x-modelgate-provider'), 'openai');
    t.equal((await openai()).circuit, 'closed');
  });
});

t.test('a request that waited on a successful probe, then called the provider, is still cancelled by its client', async (t) => {
  await withGateway({ MODELGATE_RATE_LIMITING_ENABLED: 'false', CUSTOM_BASE_URL: '', MODELGATE_CIRCUIT_BREAKER_THRESHOLD: '1', MODELGATE_CIRCUIT_BREAKER_TIMEOUT: '300', MODELGATE_RETRIES: '0', MODELGATE_TIMEOUT: '60000' }, async (gateway) => {
    const openai = async () => (await call(gateway.url, '/providers/status')).json.data.find((p: { provider: string }) => p.provider === 'openai');
    const reserved = async (): Promise<number> => (await call(gateway.url, '/usage')).json.budgets.day.reserved_usd;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const answer = openAIResponder(PROVIDER_KEYS.openai);
    primary.next(failing(500, 'openai/error-500.json'), async (request, res) => {
      await gate;
      return answer(request, res);
    }, hang());
    await t.rejects(gateway.client().chat.completions.create(ask), { status: 503, message: 'Provider unavailable' });
    t.ok(await poll(async () => (await openai()).state !== 'down'), 'the recovery timeout passed');

    const probe = gateway.client().chat.completions.create(ask);
    t.ok(await poll(async () => primary.requests.length === 2), 'the probe reached the provider');
    const one = await reserved();
    const waiterClient = new AbortController();
    const waiter = gateway.client().chat.completions.create(ask, { signal: waiterClient.signal }).catch((e: Error) => e);
    t.ok(await poll(async () => (await reserved()) > one), 'a second request waits on the probe');
    release();
    t.equal((await probe).choices[0]!.message.content, 'The capital of France is Paris.', 'the probe succeeded');
    t.ok(await poll(async () => primary.requests.length === 3), 'then the waiting request called the provider (it hangs)');
    waiterClient.abort();
    await waiter;
    t.ok(await poll(async () => primary.aborted === 1), 'its client left: the upstream call was closed');
    t.ok(await poll(async () => (await reserved()) === 0), 'and the request finished');
    t.match(await openai(), { circuit: 'closed', last_error: { status: 500 } }, 'a client that left is not a provider failure');
  });
});

t.test('every circuit open: 503 at once, without calling anyone', async (t) => {
  await withGateway({ CUSTOM_BASE_URL: '', MODELGATE_CIRCUIT_BREAKER_THRESHOLD: '1', MODELGATE_RETRIES: '0' }, async (gateway) => {
    primary.next(failing(500, 'openai/error-500.json'));
    await t.rejects(gateway.client().chat.completions.create(ask), { status: 503, message: 'Provider unavailable' });
    const refused = await call(gateway.url, '/chat/completions', { body });
    t.equal(refused.status, 503);
    t.equal(refused.json.error.code, 'circuit_open');
    t.match(refused.headers.get('retry-after'), /^\d+$/);
    t.equal(primary.requests.length, 1, 'the second request reached no provider');
  });
});

t.test('a breaker that opens during a request: the call it refuses is neither made nor counted, and not waited for', async (t) => {
  // Threshold 2 and three retries: the second failure opens the circuit, so no third call may follow,
  // nor the backoff before it.
  const BACKOFF_MS = 1500;
  primary.next(...Array.from({ length: 4 }, () => failing(500, 'openai/error-500.json')));
  const settings = { MODELGATE_CIRCUIT_BREAKER_THRESHOLD: '2', MODELGATE_RETRIES: '3', MODELGATE_RETRY_DELAY: String(BACKOFF_MS), MODELGATE_EXPONENTIAL_BACKOFF: 'false' };
  await withGateway(settings, async (gateway) => {
    const started = Date.now();
    const { response } = await gateway.client().chat.completions.create(ask).withResponse();
    const took = Date.now() - started;
    t.ok(took < 2 * BACKOFF_MS - 500, `one backoff waited out, not two (${took} ms)`);
    t.equal(response.headers.get('x-modelgate-provider'), 'custom');
    t.equal(primary.requests.length, 2, 'two calls to the first provider, the second opening its circuit');
    t.equal(response.headers.get('x-modelgate-attempts'), String(primary.requests.length + secondary.requests.length), 'the attempts header counts the calls made');
    t.equal((await circuitOf(gateway.url, 'openai')).circuit, 'open');
  });
});

t.test('a 429 without Retry-After is retried on the same target and does not count for the breaker', async (t) => {
  const limited = () => failing(429, 'openai/error-429-rate-limit.json');
  primary.next(limited(), limited());
  await withGateway({ MODELGATE_CIRCUIT_BREAKER_THRESHOLD: '2' }, async (gateway) => {
    const { response } = await gateway.client().chat.completions.create(ask).withResponse();
    t.equal(primary.requests.length, 2, 'retried on the same provider');
    t.equal(response.headers.get('x-modelgate-provider'), 'custom', 'then the next answered');
    t.equal(response.headers.get('x-modelgate-attempts'), '3');
    t.equal((await circuitOf(gateway.url, 'openai')).circuit, 'closed', 'two rate limits at a threshold of 2 leave the circuit closed');
    const next = await gateway.client().chat.completions.create(ask).withResponse();
    t.equal(next.response.headers.get('x-modelgate-provider'), 'openai', 'the provider still gets traffic');
  });
});

t.test('breakers turned off: configured providers show disabled from the start, and no attempt touches the circuit state', async (t) => {
  await withGateway({ MODELGATE_CIRCUIT_BREAKER_ENABLED: 'false' }, async (gateway) => {
    for (const provider of ['openai', 'custom']) t.equal((await circuitOf(gateway.url, provider)).circuit, 'disabled', `${provider} before any traffic`);
    const health = gateway.app.deps.health;
    const setCircuit = health.setCircuit.bind(health);
    let changes = 0;
    health.setCircuit = (...args) => {
      changes++;
      setCircuit(...args);
    };
    primary.next(failing(500, 'openai/error-500.json'), failing(500, 'openai/error-500.json'));
    for (let i = 0; i < 3; i++) await gateway.client().chat.completions.create(ask);
    t.equal(primary.requests.length + secondary.requests.length, 5, 'attempts were made: two failures and an answer, then two answers');
    t.equal(changes, 0, 'none of them set the circuit state');
    t.equal((await circuitOf(gateway.url, 'openai')).circuit, 'disabled');
  });
});

t.end();
