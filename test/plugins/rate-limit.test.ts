// Rate limits on one gateway with the embedded store: bursts and refill, the hourly cap, tokens
// per minute with the correction from real usage, and OpenAI's x-ratelimit-* headers everywhere.
import t from 'tap';
import { startGateway, call, type TestGateway, PROTOCOL_ONLY } from '../helpers/gateway.js';
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

/** Calls until one is admitted, sleeping as long as the gateway says; gives up after `limitMs`. */
async function untilAdmitted(send: () => ReturnType<typeof call>, limitMs: number): Promise<Awaited<ReturnType<typeof call>>> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const response = await send();
    if (response.status !== 429 || Date.now() > deadline) return response;
    await sleep(Math.min(1000, Number(response.headers.get('retry-after-ms') ?? 200)));
  }
}

t.test('a key may burst BURST requests after idling, is then refused with Retry-After, and refills at RPM', async (t) => {
  await withGateway({ MODELGATE_RATE_LIMIT_BURST: '3', MODELGATE_RATE_LIMIT_RPM: '6' }, async (gateway) => {
    const remaining: Array<string | null> = [];
    for (let i = 0; i < 3; i++) {
      const response = await call(gateway.url, '/models');
      t.equal(response.status, 200, `request ${i + 1} of the burst passes`);
      remaining.push(response.headers.get('x-ratelimit-remaining-requests'));
    }
    t.same(remaining, ['2', '1', '0']);
    const refused = await call(gateway.url, '/models');
    t.equal(refused.status, 429);
    t.equal(checkError(refused.json), null);
    t.equal(refused.json.error.message, 'Rate limit exceeded');
    t.equal(refused.json.error.type, 'requests');
    const retryAfter = Number(refused.headers.get('retry-after'));
    t.ok(retryAfter >= 1 && retryAfter <= 10, `Retry-After ${retryAfter}s is within one refill interval (10 s at 6 RPM)`);
    t.equal(refused.headers.get('x-ratelimit-remaining-requests'), '0');

    const refilled = await untilAdmitted(() => call(gateway.url, '/models'), 30_000);
    t.equal(refilled.status, 200, 'one request is admitted again once the allowance refilled');
    t.equal((await call(gateway.url, '/models')).status, 429, 'and only one: the refill is one request per 10 s, not a new burst');
  });
});

t.test('refused requests consume nothing, so a client hammering while limited gets in as soon as the refill allows', async (t) => {
  // 12 RPM: one request every 5 s, so the five refusals fit in the interval even on a busy machine.
  await withGateway({ MODELGATE_RATE_LIMIT_BURST: '1', MODELGATE_RATE_LIMIT_RPM: '12', MODELGATE_RATE_LIMIT_RPH: '2' }, async (gateway) => {
    t.equal((await call(gateway.url, '/models')).status, 200);
    for (let i = 0; i < 5; i++) t.equal((await call(gateway.url, '/models')).status, 429);
    t.equal((await untilAdmitted(() => call(gateway.url, '/models'), 30_000)).status, 200, 'the five refusals did not use up the hourly 2');
  });
});

t.test('no more than RPH requests in an hour, whatever the burst and RPM allow', async (t) => {
  await withGateway({ MODELGATE_RATE_LIMIT_BURST: '50', MODELGATE_RATE_LIMIT_RPM: '600', MODELGATE_RATE_LIMIT_RPH: '3' }, async (gateway) => {
    for (let i = 0; i < 3; i++) t.equal((await call(gateway.url, '/models')).status, 200);
    const refused = await call(gateway.url, '/models');
    t.equal(refused.status, 429);
    t.ok(Number(refused.headers.get('retry-after')) > 3000, `Retry-After ${refused.headers.get('retry-after')}s: the first request must leave the hour`);
    t.equal(refused.headers.get('x-ratelimit-limit-requests'), '3', 'the limit reported is the tighter of burst and RPH');
  });
});

t.test('tokens per minute: a request takes its estimate, gives back what it did not use, and one larger than TPM is refused outright', async (t) => {
  await withGateway({ MODELGATE_RATE_LIMIT_TPM: '1000' }, async (gateway) => {
    upstream.reset();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow: Responder = async (request, res) => {
      await held;
      return openAIResponder()(request, res);
    };
    upstream.next(slow);
    const first = call(gateway.url, '/chat/completions', { body: chat(900) });
    for (let i = 0; i < 100 && upstream.requests.length === 0; i++) await sleep(20);
    const second = await call(gateway.url, '/chat/completions', { body: chat(900) });
    t.equal(second.status, 429, 'the first request holds ~910 of the 1000 tokens');
    t.equal(second.json.error.type, 'tokens');
    t.ok(Number(second.headers.get('x-ratelimit-remaining-tokens')) < 100);
    release();
    t.equal((await first).status, 200);
    // The fixture reports 32 tokens used: the rest of the estimate comes back.
    const third = await untilAdmitted(() => call(gateway.url, '/chat/completions', { body: chat(900) }), 10_000);
    t.equal(third.status, 200, 'the unused estimate was given back');

    const before = upstream.requests.length;
    const huge = await call(gateway.url, '/chat/completions', { body: chat(5000) });
    t.equal(huge.status, 429);
    t.equal(huge.json.error.param, 'max_tokens');
    t.equal(huge.headers.get('x-should-retry'), 'false', 'waiting will not help');
    t.equal(upstream.requests.length, before, 'the provider was not called');
  });
});

t.test('every keyed response carries the x-ratelimit-* headers in OpenAI format', async (t) => {
  await withGateway({ MODELGATE_RATE_LIMIT_BURST: '10', MODELGATE_RATE_LIMIT_RPM: '60', MODELGATE_RATE_LIMIT_TPM: '5000' }, async (gateway) => {
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
      t.equal(response.headers.get('x-ratelimit-limit-requests'), '10');
      t.match(response.headers.get('x-ratelimit-remaining-requests'), /^\d+$/);
      t.match(response.headers.get('x-ratelimit-reset-requests'), /^(\d+ms|(\d+h)?(\d+m)?[\d.]+s)$/);
      t.equal(response.headers.get('x-ratelimit-limit-tokens'), '5000');
      t.match(response.headers.get('x-ratelimit-remaining-tokens'), /^\d+$/);
      t.match(response.headers.get('x-ratelimit-reset-tokens'), /^(\d+ms|(\d+h)?(\d+m)?[\d.]+s)$/);
    }
    t.equal(responses[2]!.headers.get('x-ratelimit-remaining-requests'), '7');
    const reset = responses[2]!.headers.get('x-ratelimit-reset-requests')!;
    t.ok(/^(\d+ms|[\d.]+s)$/.test(reset) && parseFloat(reset) <= (reset.endsWith('ms') ? 3000 : 3), `three used at 60 RPM are back within 3 s: ${reset}`);
  });
});

t.test('with MODELGATE_RATE_LIMITING_ENABLED=false nothing is limited and no headers are added', async (t) => {
  await withGateway({ MODELGATE_RATE_LIMITING_ENABLED: 'false', MODELGATE_RATE_LIMIT_BURST: '1' }, async (gateway) => {
    for (let i = 0; i < 3; i++) {
      const response = await call(gateway.url, '/models');
      t.equal(response.status, 200);
      t.equal(response.headers.get('x-ratelimit-limit-requests'), null);
    }
  });
});

t.end();
