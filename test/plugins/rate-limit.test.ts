// Rate limits on one gateway with the embedded store: bursts, when the minute window gives its
// allowance back, the hourly cap, tokens per minute with the correction from real usage, refusals
// that consume nothing, and OpenAI's x-ratelimit-* headers everywhere.
import t from 'tap';
import OpenAI from 'openai';
import { startGateway, call, type TestGateway, PROTOCOL_ONLY, GATEWAY_KEY } from '../helpers/gateway.js';
import { startFakeOpenAI, openAIResponder, PROVIDER_KEYS } from '../helpers/fakes.js';
import { sleep, type FakeProvider, type Responder } from '../helpers/fake-provider.js';
import { checkError } from '../helpers/schema.js';

let upstream: FakeProvider;
t.before(async () => {
  upstream = await startFakeOpenAI();
});
t.after(() => upstream.close());

async function withGateway(env: Record<string, string>, run: (gateway: TestGateway) => Promise<void>): Promise<void> {
  const gateway = await startGateway({ ...PROTOCOL_ONLY, OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, ...env });
  try {
    await run(gateway);
  } finally {
    await gateway.close();
  }
}

const chat = (maxTokens: number) => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], max_tokens: maxTokens });

/** The fixture's usage.total_tokens: what every chat completion of the fake provider really used. */
const USED = 32;

/** The next chat completion from the fake provider waits until `release` is called. */
function holdNextCompletion(): () => void {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const slow: Responder = async (request, res) => {
    await held;
    return openAIResponder()(request, res);
  };
  upstream.next(slow);
  return release;
}

async function untilUpstreamHas(count: number): Promise<void> {
  for (let i = 0; i < 500 && upstream.requests.length < count; i++) await sleep(20);
}

/** OpenAI's duration format back to ms: "20ms", "1.5s", "1m0s", "59m59.5s". */
function durationMs(text: string | null): number {
  const match = /^(?:(\d+)ms|(?:(\d+)h)?(?:(\d+)m)?([\d.]+)s)$/.exec(text ?? '');
  if (!match) return NaN;
  if (match[1] !== undefined) return Number(match[1]);
  return (Number(match[2] ?? 0) * 3600 + Number(match[3] ?? 0) * 60 + Number(match[4])) * 1000;
}

/** Polls GET /models until its x-ratelimit-remaining-tokens is `expected`; returns the last value seen. */
async function remainingTokensBecomes(gateway: TestGateway, expected: number): Promise<number> {
  let seen = NaN;
  for (let i = 0; i < 100 && seen !== expected; i++) {
    if (i > 0) await sleep(50);
    seen = Number((await call(gateway.url, '/models')).headers.get('x-ratelimit-remaining-tokens'));
  }
  return seen;
}

t.test('a key idle long enough may send BURST requests at once, then is refused until its minute window ends', async (t) => {
  await withGateway({ MODELGATE_RATE_LIMIT_BURST: '3', MODELGATE_RATE_LIMIT_RPM: '2' }, async (gateway) => {
    const windowOpenedBy = Date.now(); // the minute window opens with the key's first request, no earlier
    const remaining: Array<string | null> = [];
    for (let i = 0; i < 3; i++) {
      const response = await call(gateway.url, '/models');
      t.equal(response.status, 200, `request ${i + 1} of the burst passes (two from the minute, one from the burst allowance)`);
      remaining.push(response.headers.get('x-ratelimit-remaining-requests'));
    }
    t.same(remaining, ['2', '1', '0']);
    const refused = await call(gateway.url, '/models');
    t.equal(refused.status, 429);
    t.equal(checkError(refused.json), null);
    t.equal(refused.json.error.message, 'Rate limit exceeded');
    t.equal(refused.json.error.type, 'requests');
    t.equal(refused.headers.get('x-ratelimit-remaining-requests'), '0');
    t.equal(refused.headers.get('x-ratelimit-limit-requests'), '3');
    const retryAfterMs = Number(refused.headers.get('retry-after-ms'));
    const untilWindowEnds = windowOpenedBy + 60_000 - Date.now();
    t.ok(retryAfterMs <= 60_000 && retryAfterMs >= untilWindowEnds, `retry-after-ms ${retryAfterMs}: when the minute window ends, RPM come back`);
    t.equal(Number(refused.headers.get('retry-after')), Math.ceil(retryAfterMs / 1000), 'Retry-After says the same in seconds');
    const reset = durationMs(refused.headers.get('x-ratelimit-reset-requests'));
    t.ok(Math.abs(reset - retryAfterMs) <= 10, `and so does x-ratelimit-reset-requests (${refused.headers.get('x-ratelimit-reset-requests')}, to 10 ms)`);

    let last = retryAfterMs;
    for (let i = 0; i < 5; i++) {
      const again = await call(gateway.url, '/models');
      t.equal(again.status, 429, 'a client hammering while limited is refused');
      const wait = Number(again.headers.get('retry-after-ms'));
      t.ok(wait <= last, `and does not push the refill back (${wait} ms)`);
      last = wait;
    }
  });
});

t.test('no more than RPH requests in an hour window, whatever the burst and RPM allow', async (t) => {
  await withGateway({ MODELGATE_RATE_LIMIT_BURST: '50', MODELGATE_RATE_LIMIT_RPM: '10', MODELGATE_RATE_LIMIT_RPH: '3' }, async (gateway) => {
    for (let i = 0; i < 3; i++) t.equal((await call(gateway.url, '/models')).status, 200);
    const refused = await call(gateway.url, '/models');
    t.equal(refused.status, 429);
    t.equal(refused.json.error.type, 'requests');
    t.ok(Number(refused.headers.get('retry-after')) > 3000, `Retry-After ${refused.headers.get('retry-after')}s: the hour window must end`);
    t.equal(refused.headers.get('x-ratelimit-limit-requests'), '3', 'the headers report the tighter limit, the hour');
    t.equal(refused.headers.get('x-ratelimit-remaining-requests'), '0');
    const reset = durationMs(refused.headers.get('x-ratelimit-reset-requests'));
    t.ok(reset > 3_000_000 && reset <= 3_600_000, `reset-requests ${refused.headers.get('x-ratelimit-reset-requests')}: the hour window's end`);
  });
});

t.test('tokens per minute: a request takes its estimate, and the real usage corrects it afterwards', async (t) => {
  await withGateway({ MODELGATE_RATE_LIMIT_TPM: '1000' }, async (gateway) => {
    upstream.reset();
    const release = holdNextCompletion();
    const first = call(gateway.url, '/chat/completions', { body: chat(900) });
    await untilUpstreamHas(1);
    const second = await call(gateway.url, '/chat/completions', { body: chat(900) });
    t.equal(second.status, 429, 'the first request holds its estimate (~910 of the 1000 tokens)');
    t.equal(second.json.error.type, 'tokens');
    const left = Number(second.headers.get('x-ratelimit-remaining-tokens'));
    t.ok(left > 0 && left < 100, `${left} tokens left`);
    t.ok(Number(second.headers.get('retry-after')) <= 60, 'Retry-After: when the minute window ends');
    release();
    t.equal((await first).status, 200);
    t.equal(await remainingTokensBecomes(gateway, 1000 - USED), 1000 - USED, 'the estimate was replaced by the real usage: the rest came back');

    // An estimate below the real usage: max_tokens 1, but the provider reports 32 tokens.
    const small = await call(gateway.url, '/chat/completions', { body: chat(1) });
    t.equal(small.status, 200);
    const estimate = 1000 - USED - Number(small.headers.get('x-ratelimit-remaining-tokens'));
    t.ok(estimate < USED, `the estimate (${estimate}) was below the usage`);
    t.equal(await remainingTokensBecomes(gateway, 1000 - 2 * USED), 1000 - 2 * USED, 'and the overrun was taken afterwards');
  });
});

t.test('a request whose estimate alone exceeds TPM is refused outright, without calling the provider', async (t) => {
  await withGateway({ MODELGATE_RATE_LIMIT_TPM: '1000' }, async (gateway) => {
    upstream.reset();
    const huge = await call(gateway.url, '/chat/completions', { body: chat(5000) });
    t.equal(huge.status, 429);
    t.equal(huge.json.error.type, 'tokens');
    t.equal(huge.json.error.message, 'Rate limit exceeded', "the spec's message");
    t.equal(huge.json.error.code, 'request_too_large_for_tpm', 'the code says this request alone is too large');
    t.equal(huge.json.error.param, 'max_tokens', 'the prompt fits: max_tokens is what to lower');
    t.equal(huge.headers.get('x-should-retry'), 'false', 'waiting will not help');
    t.equal(huge.headers.get('retry-after'), null);
    t.equal(huge.headers.get('x-ratelimit-remaining-tokens'), '1000', 'it took nothing');
    t.equal(upstream.requests.length, 0, 'the provider was not called');
  });
});

t.test('a prompt alone larger than the whole TPM: refused, naming the messages, with no invitation to retry', async (t) => {
  await withGateway({ MODELGATE_RATE_LIMIT_TPM: '1000' }, async (gateway) => {
    upstream.reset();
    const prompt = 'lorem ipsum dolor sit amet '.repeat(1500);
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: prompt }] });
    const huge = await call(gateway.url, '/chat/completions', { body });
    t.equal(huge.status, 429);
    t.equal(huge.json.error.message, 'Rate limit exceeded');
    t.equal(huge.json.error.code, 'request_too_large_for_tpm');
    t.equal(huge.json.error.param, 'messages');
    t.equal(huge.headers.get('retry-after'), null, 'no Retry-After: no wait can help');
    t.equal(huge.headers.get('x-should-retry'), 'false', 'SDKs are told not to retry');
    t.equal(upstream.requests.length, 0, 'the provider was not called');
    // The real OpenAI SDK gives up at once instead of retrying with its backoff.
    const client = new OpenAI({ apiKey: GATEWAY_KEY, baseURL: gateway.url, maxRetries: 3 });
    const error = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: prompt }] }).catch((thrown: unknown) => thrown);
    t.ok(error instanceof OpenAI.RateLimitError);
    t.equal((error as InstanceType<typeof OpenAI.RateLimitError>).code, 'request_too_large_for_tpm');
    t.equal(upstream.requests.length, 0);
  });
});

t.test('a request refused for tokens takes nothing from the request limits either', async (t) => {
  // Minute and hour both allow 5: the headers report the smaller, so a leak from either would show.
  await withGateway({ MODELGATE_RATE_LIMIT_BURST: '5', MODELGATE_RATE_LIMIT_RPM: '5', MODELGATE_RATE_LIMIT_RPH: '5', MODELGATE_RATE_LIMIT_TPM: '1000' }, async (gateway) => {
    upstream.reset();
    const release = holdNextCompletion();
    const first = call(gateway.url, '/chat/completions', { body: chat(900) });
    await untilUpstreamHas(1);
    for (let i = 0; i < 4; i++) t.equal((await call(gateway.url, '/chat/completions', { body: chat(900) })).status, 429);
    release();
    t.equal((await first).status, 200);
    const next = await call(gateway.url, '/models');
    t.equal(next.status, 200);
    t.equal(next.headers.get('x-ratelimit-remaining-requests'), '3', 'two requests admitted of five; the four refusals count for nothing');
  });
});

t.test('every keyed response carries the x-ratelimit-* headers in OpenAI format, on chat and other routes', async (t) => {
  await withGateway({ MODELGATE_RATE_LIMIT_BURST: '10', MODELGATE_RATE_LIMIT_RPM: '5', MODELGATE_RATE_LIMIT_TPM: '5000' }, async (gateway) => {
    const responses = [
      await call(gateway.url, '/chat/completions', { body: chat(100) }),
      await call(gateway.url, '/chat/completions', { body: JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }) }),
      await call(gateway.url, '/models'),
    ];
    t.same(
      responses.map((r) => r.status),
      [200, 404, 200],
    );
    for (const response of responses) {
      t.equal(response.headers.get('x-ratelimit-limit-requests'), '10', 'BURST: the most a key may send at once');
      t.match(response.headers.get('x-ratelimit-remaining-requests'), /^\d+$/);
      t.ok(durationMs(response.headers.get('x-ratelimit-reset-requests')) <= 60_000, `reset-requests ${response.headers.get('x-ratelimit-reset-requests')}: when the minute window ends`);
      t.equal(response.headers.get('x-ratelimit-limit-tokens'), '5000');
      t.match(response.headers.get('x-ratelimit-remaining-tokens'), /^\d+$/);
      t.ok(durationMs(response.headers.get('x-ratelimit-reset-tokens')) <= 60_000, `reset-tokens ${response.headers.get('x-ratelimit-reset-tokens')}`);
    }
    t.same(
      responses.map((r) => r.headers.get('x-ratelimit-remaining-requests')),
      ['9', '8', '7'],
      'GET /models counts as a request like the chats',
    );
  });
});

t.test('with MODELGATE_RATE_LIMITING_ENABLED=false nothing is limited and no headers are added', async (t) => {
  await withGateway({ MODELGATE_RATE_LIMITING_ENABLED: 'false', MODELGATE_RATE_LIMIT_BURST: '1', MODELGATE_RATE_LIMIT_RPM: '1' }, async (gateway) => {
    for (let i = 0; i < 3; i++) {
      const response = await call(gateway.url, '/models');
      t.equal(response.status, 200);
      t.equal(response.headers.get('x-ratelimit-limit-requests'), null);
    }
  });
});

t.end();
