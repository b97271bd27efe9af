// Failover end to end: one model served by two fake providers (openai first, being cheaper; custom
// second), the real gateway, the real SDK. Each case scripts how the first provider fails and checks
// the attempts, which fake was called, and the final answer. The circuit breaker has its own file
// (failover-breaker.test.ts), and so do the limits a client cannot lift (failover-limits.test.ts).
import t from 'tap';
import { call } from '../helpers/gateway.js';
import { estimatePromptTokens } from '../../core/tokens.js';
import { openAIResponder, PROVIDER_KEYS } from '../helpers/fakes.js';
import { FakeProvider, drop, fixture, hang, json, sleep, sse, type Responder } from '../helpers/fake-provider.js';
import { ask, body, failing, startDuo } from '../helpers/failover.js';

const { primary, secondary, catalog, withGateway } = await startDuo(t);

t.test('the failover matrix: how the first provider fails decides retries, and the second answers', async (t) => {
  const cases: Array<{ name: string; script: Responder[]; primaryCalls: number; attempts: number; extra?: Record<string, string> }> = [
    { name: '500: retried once, then the next provider', script: [failing(500, 'openai/error-500.json'), failing(500, 'openai/error-500.json')], primaryCalls: 2, attempts: 3 },
    { name: '529 overloaded: retried, then the next provider', script: [failing(529, 'anthropic/error-529.json'), failing(529, 'anthropic/error-529.json')], primaryCalls: 2, attempts: 3 },
    { name: '503: retried, then the next provider', script: [failing(503, 'openai/error-503.json'), failing(503, 'openai/error-503.json')], primaryCalls: 2, attempts: 3 },
    { name: '429 with Retry-After: not retried there, straight to the next', script: [failing(429, 'openai/error-429-rate-limit.json', { 'retry-after': '5' })], primaryCalls: 1, attempts: 2 },
    { name: 'a hang past MODELGATE_TIMEOUT: not retried there, straight to the next', script: [hang()], primaryCalls: 1, attempts: 2 },
    { name: 'a garbage 200 body: retried, then the next', script: [json(200, '<html>oops</html>'), json(200, { no: 'choices' })], primaryCalls: 2, attempts: 3 },
    { name: 'a dropped connection: retried, then the next', script: [drop(), drop()], primaryCalls: 2, attempts: 3 },
  ];
  for (const c of cases) {
    primary.reset();
    secondary.reset();
    primary.next(...c.script);
    await withGateway(c.extra ?? {}, async (gateway) => {
      const { data, response } = await gateway.client().chat.completions.create(ask).withResponse();
      t.equal(data.choices[0]!.message.content, 'The capital of France is Paris.', `${c.name}: answered`);
      t.equal(response.headers.get('x-modelgate-provider'), 'custom', `${c.name}: by the second provider`);
      t.equal(response.headers.get('x-modelgate-attempts'), String(c.attempts), `${c.name}: attempts`);
      t.equal(primary.requests.length, c.primaryCalls, `${c.name}: calls to the first provider`);
      t.equal(secondary.requests.length, 1, `${c.name}: one call to the second`);
    });
  }
});

t.test('a failed-over request is billed once, for the provider that answered; the failed reservation is released', async (t) => {
  primary.next(failing(500, 'openai/error-500.json'), failing(500, 'openai/error-500.json'));
  await withGateway({}, async (gateway) => {
    const { response } = await gateway.client().chat.completions.create(ask).withResponse();
    t.equal(response.headers.get('x-modelgate-provider'), 'custom');
    const usage = (await call(gateway.url, '/usage')).json;
    // The fixture's 24 + 8 tokens at custom's $2e-7 per token.
    const cost = 32 * 2e-7;
    t.equal(usage.budgets.day.requests, 1);
    t.ok(Math.abs(usage.budgets.day.spent_usd - cost) < 1e-9, `spent ${usage.budgets.day.spent_usd}, expected ${cost}`);
    t.equal(usage.budgets.day.reserved_usd, 0, 'nothing stays reserved');
    t.same(usage.budgets.day.by_model.map((row: { provider: string }) => row.provider), ['custom']);
  });
});

t.test('a call that timed out is billed at its estimate (the provider usually generated it); a refused one is free', async (t) => {
  primary.next(hang());
  await withGateway({}, async (gateway) => {
    const asked = { ...ask, max_tokens: 10 };
    const { response } = await gateway.client().chat.completions.create(asked).withResponse();
    t.equal(response.headers.get('x-modelgate-provider'), 'custom');
    const rows = (await call(gateway.url, '/usage')).json.budgets.day.by_model as Array<{ provider: string; cost_usd: number }>;
    const estimate = (estimatePromptTokens(asked as never) + 10) * 1e-7;
    const timedOut = rows.find((row) => row.provider === 'openai');
    t.ok(timedOut && Math.abs(timedOut.cost_usd - estimate) < 1e-9, `the timed-out call: $${timedOut?.cost_usd}, estimate $${estimate}`);
  });
  primary.reset();
  secondary.reset();
  primary.next(failing(500, 'openai/error-500.json'), failing(500, 'openai/error-500.json'));
  await withGateway({}, async (gateway) => {
    await gateway.client().chat.completions.create(ask);
    const rows = (await call(gateway.url, '/usage')).json.budgets.day.by_model as Array<{ provider: string; cost_usd: number }>;
    t.notOk(rows.some((row) => row.provider === 'openai' && row.cost_usd > 0), 'the 5xx calls cost nothing');
  });
});

t.test('connection refused: the next provider answers', async (t) => {
  const closed = await FakeProvider.start(hang());
  const port = closed.port;
  await closed.close();
  await withGateway({ OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` }, async (gateway) => {
    const { response } = await gateway.client().chat.completions.create(ask).withResponse();
    t.equal(response.headers.get('x-modelgate-provider'), 'custom');
    t.equal(response.headers.get('x-modelgate-attempts'), '3', 'the refused provider was retried once');
  });
});

t.test("a provider's Retry-After keeps that provider+model out of later requests until then; its other models still route", async (t) => {
  // `duo` on both providers, and `solo` on openai only.
  const file = catalog('with-solo.json', [
    { provider: 'openai', id: 'duo', native: 'gpt-4o-mini', price: 1e-7 },
    { provider: 'custom', id: 'duo', native: 'llama', price: 2e-7 },
    { provider: 'openai', id: 'solo', native: 'gpt-4o', price: 1e-7 },
  ]);
  primary.next(failing(429, 'openai/error-429-rate-limit.json', { 'retry-after': '30' }));
  await withGateway({ MODELGATE_MODEL_CATALOG: file }, async (gateway) => {
    await gateway.client().chat.completions.create(ask);
    await gateway.client().chat.completions.create(ask);
    t.equal(primary.requests.length, 1, 'the second request did not try the cooling provider+model');
    t.equal(secondary.requests.length, 2);
    const solo = await gateway.client().chat.completions.create({ ...ask, model: 'solo' }).withResponse();
    t.equal(solo.response.headers.get('x-modelgate-provider'), 'openai', "the provider's other model is not held back");
    t.equal(primary.last?.json.model, 'gpt-4o');
    const status = await call(gateway.url, '/providers/status');
    const openai = status.json.data.find((p: { provider: string }) => p.provider === 'openai');
    t.ok(openai.cooldown_until, 'the status shows until when');
    t.equal(openai.state, 'degraded');
  });
});

t.test('a Retry-After longer than MODELGATE_MAX_RETRY_AFTER is cut to it', async (t) => {
  const polling = { MODELGATE_RATE_LIMITING_ENABLED: 'false' };
  // A day, by default cut to 60 s: what the status and the client's Retry-After say.
  primary.next(failing(429, 'openai/error-429-rate-limit.json', { 'retry-after': '86400' }));
  secondary.next(failing(500, 'openai/error-500.json'), failing(500, 'openai/error-500.json'));
  await withGateway(polling, async (gateway) => {
    const before = Date.now();
    const refused = await call(gateway.url, '/chat/completions', { body });
    t.equal(refused.status, 503);
    t.equal(refused.headers.get('retry-after'), '60', "the client is told the capped wait");
    const openai = (await call(gateway.url, '/providers/status')).json.data.find((p: { provider: string }) => p.provider === 'openai');
    const until = Date.parse(openai.cooldown_until) - before;
    t.ok(until > 50_000 && until <= 61_000, `cooling down for ~60 s, not a day (${until} ms)`);
  });
  // A short cap: the model comes back by itself.
  primary.reset();
  secondary.reset();
  primary.next(failing(429, 'openai/error-429-rate-limit.json', { 'retry-after': '86400' }));
  await withGateway({ ...polling, MODELGATE_MAX_RETRY_AFTER: '200' }, async (gateway) => {
    const first = await gateway.client().chat.completions.create(ask).withResponse();
    t.equal(first.response.headers.get('x-modelgate-provider'), 'custom');
    let back = false;
    for (let i = 0; i < 100 && !back; i++) {
      await sleep(20);
      back = (await gateway.client().chat.completions.create(ask).withResponse()).response.headers.get('x-modelgate-provider') === 'openai';
    }
    t.ok(back, 'openai serves the model again once the capped wait is over');
  });
});

t.test("the cost guard refusing a fallback skips that candidate; refusing the client's first choice ends the request", async (t) => {
  // duo: openai priced, custom unpriced; solo: openai only, priced.
  const file = catalog('unpriced-second.json', [
    { provider: 'openai', id: 'duo', native: 'gpt-4o-mini', price: 1e-7 },
    { provider: 'custom', id: 'duo', native: 'llama', price: null },
    { provider: 'openai', id: 'solo', native: 'gpt-4o', price: 1e-7 },
  ]);
  const fallBack = { ...ask, modelgate: { failover: { fallback_models: ['solo'] } } };
  const cases: Array<{ name: string; extra: Record<string, string>; headers?: Record<string, string> }> = [
    { name: 'an unpriced fallback', extra: {} },
    // Allowed unpriced models are estimated at $10/$30 per 1M tokens: over a $0.001 cap.
    { name: 'a fallback over the per-request cap', extra: { MODELGATE_ALLOW_UNPRICED_MODELS: 'true' }, headers: { 'x-modelgate-max-cost': '0.001' } },
  ];
  for (const c of cases) {
    primary.reset();
    secondary.reset();
    await withGateway({ MODELGATE_MODEL_CATALOG: file, ...c.extra }, async (gateway) => {
      primary.next(failing(500, 'openai/error-500.json'), failing(500, 'openai/error-500.json'));
      const { response } = await gateway.client().chat.completions.create(fallBack as never, { headers: c.headers }).withResponse();
      t.equal(response.headers.get('x-modelgate-model'), 'solo', `${c.name}: skipped, the next candidate answered`);
      t.equal(secondary.requests.length, 0, `${c.name}: the refused candidate was not called`);

      primary.next(failing(500, 'openai/error-500.json'), failing(500, 'openai/error-500.json'));
      const alone = await call(gateway.url, '/chat/completions', { body, headers: c.headers });
      t.same([alone.status, alone.json.error.message], [503, 'Provider unavailable'], `${c.name}: with nothing after it, the answer is the first failure's`);
    });
  }
  await withGateway({ MODELGATE_MODEL_CATALOG: file }, async (gateway) => {
    const pinned = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ ...fallBack, model: 'custom/duo' }) });
    t.same([pinned.status, pinned.json.error.code], [403, 'model_unpriced'], "the client's own first choice refused: that is the answer");
  });
});

t.test('a 400 caused by the request is neither retried nor failed over', async (t) => {
  primary.next(failing(400, 'anthropic/error-400.json'));
  await withGateway({}, async (gateway) => {
    await t.rejects(gateway.client().chat.completions.create(ask), { status: 400, message: /prompt is too long/ });
    t.equal(primary.requests.length, 1);
    t.equal(secondary.requests.length, 0);
  });
});

t.test('a provider refusing the gateway\'s key fails over (it is not the request\'s fault)', async (t) => {
  primary.next(failing(401, 'openai/error-401.json'));
  await withGateway({}, async (gateway) => {
    const { response } = await gateway.client().chat.completions.create(ask).withResponse();
    t.equal(response.headers.get('x-modelgate-provider'), 'custom');
    t.equal(primary.requests.length, 1, 'a credential error is not retried on the same provider');
  });
});

t.test('with failover disabled, only retries on the chosen target', async (t) => {
  primary.next(failing(500, 'openai/error-500.json'), failing(500, 'openai/error-500.json'));
  await withGateway({}, async (gateway) => {
    const refused = await gateway.client().chat.completions.create(ask, { headers: { 'x-modelgate-failover': 'false' } }).catch((e: { status: number; message: string }) => e);
    t.match(refused, { status: 503, message: 'Provider unavailable' });
    t.equal(primary.requests.length, 2);
    t.equal(secondary.requests.length, 0);
  });
  primary.reset();
  primary.next(failing(500, 'openai/error-500.json'), failing(500, 'openai/error-500.json'), failing(500, 'openai/error-500.json'));
  await withGateway({ MODELGATE_FAILOVER_ENABLED: 'false', MODELGATE_RETRIES: '3' }, async (gateway) => {
    await t.rejects(gateway.client().chat.completions.create({ ...ask, modelgate: { retry: { retry_attempts: 2, retry_delay: 5 } } } as never), { status: 503, message: 'Provider unavailable' });
    t.equal(primary.requests.length, 3, 'the per-request retry config was used');
    t.equal(secondary.requests.length, 0);
  });
});

t.test('all candidates failed: 503 Provider unavailable, with the known Retry-After', async (t) => {
  primary.next(failing(429, 'openai/error-429-rate-limit.json', { 'retry-after': '7' }));
  secondary.next(failing(500, 'openai/error-500.json'), failing(500, 'openai/error-500.json'));
  await withGateway({}, async (gateway) => {
    const response = await call(gateway.url, '/chat/completions', { body });
    t.equal(response.status, 503);
    t.same(response.json.error, { message: 'Provider unavailable', type: 'service_unavailable_error', param: null, code: 'provider_unavailable' });
    t.equal(response.headers.get('retry-after'), '7');
  });
});

t.test('a stream that fails before its first content fails over; the client sees one whole stream', async (t) => {
  primary.next(sse(fixture('openai/stream-error.sse').split('\n\n').slice(1).join('\n\n')), failing(500, 'openai/error-500.json'));
  await withGateway({}, async (gateway) => {
    const { data: stream, response } = await gateway.client().chat.completions.create({ ...ask, stream: true }).withResponse();
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    t.equal(text, 'The capital of France is Paris.');
    t.equal(response.headers.get('x-modelgate-provider'), 'custom');
  });
});

t.test("a stream attempt that failed before committing leaves nothing behind: its text is not sent, cached or logged", async (t) => {
  // Content and the error event in one write: the first attempt reads "The" and then fails, in one read.
  const contentThenError: Responder = (_request, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(fixture('openai/stream-error.sse'));
  };
  primary.next(contentThenError, contentThenError);
  await withGateway({ MODELGATE_CACHE_ENABLED: 'true', MODELGATE_LOG_RESPONSES: 'true' }, async (gateway) => {
    const { data: stream, response } = await gateway.client().chat.completions.create({ ...ask, stream: true }).withResponse();
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    t.equal(text, 'The capital of France is Paris.', 'the client stream has the answer once');
    t.equal(response.headers.get('x-modelgate-provider'), 'custom');
    t.equal(response.headers.get('x-modelgate-attempts'), '3', 'two failed attempts on the first provider, then the second');

    let logged: Record<string, unknown> | undefined;
    for (let i = 0; i < 200 && !logged; i++) {
      logged = gateway.logs.find((line) => line.msg === 'request' && line.path === '/v1/chat/completions');
      if (!logged) await sleep(10);
    }
    t.equal(logged?.response, 'The capital of France is Paris.', "the outcome's generated text has the answer once");

    let replay: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < 100; i++) {
      replay = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ ...ask, stream: false }) });
      if (replay.headers.get('x-modelgate-cache') === 'HIT') break;
      await sleep(20);
    }
    t.equal(replay?.headers.get('x-modelgate-cache'), 'HIT');
    t.equal(replay?.json.choices[0].message.content, 'The capital of France is Paris.', 'the cached replay has the answer once');
    t.equal(secondary.requests.length, 1, 'the replay came from the cache');
  });
});

t.test('a stream that fails after its first content ends with an error event; no other provider is tried', async (t) => {
  primary.next(sse(fixture('openai/stream-error.sse'), { delayMs: 250 }));
  await withGateway({}, async (gateway) => {
    const stream = await gateway.client().chat.completions.create({ ...ask, stream: true });
    const received: string[] = [];
    await t.rejects(
      (async () => {
        for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
      })(),
      { message: /server had an error/ },
    );
    t.same(received, ['The']);
    t.equal(secondary.requests.length, 0);
    const status = await call(gateway.url, '/providers/status');
    t.match(status.json.data.find((p: { provider: string }) => p.provider === 'openai').last_error, { reason: 'stream_error' });
  });
});

t.test('a client that disconnects cancels the attempt and every pending retry or failover', async (t) => {
  primary.next(hang());
  await withGateway({ MODELGATE_TIMEOUT: '10000' }, async (gateway) => {
    const controller = new AbortController();
    const pending = gateway.client().chat.completions.create(ask, { signal: controller.signal });
    for (let i = 0; i < 100 && primary.requests.length === 0; i++) await sleep(10);
    controller.abort();
    await t.rejects(pending);
    for (let i = 0; i < 100 && primary.aborted === 0; i++) await sleep(20);
    t.equal(primary.aborted, 1, 'the upstream request was closed');
    await sleep(200);
    t.equal(primary.requests.length, 1, 'no retry');
    t.equal(secondary.requests.length, 0, 'no failover');
  });
});

t.test('performance_optimized follows the provider that is really fastest, and follows change', async (t) => {
  const equal = catalog('equal.json', [
    { provider: 'openai', id: 'duo', native: 'gpt-4o-mini', price: 1e-7 },
    { provider: 'custom', id: 'duo', native: 'llama', price: 1e-7 },
  ]);
  let slow: 'primary' | 'secondary' = 'primary';
  const paced = (side: 'primary' | 'secondary', key: string): Responder => {
    const base = openAIResponder(key);
    return async (request, res) => {
      // A wide gap, so a loaded machine's scheduling noise cannot blur which one is faster.
      await sleep(slow === side ? 400 : 0);
      return base(request, res);
    };
  };
  primary.fallback = paced('primary', PROVIDER_KEYS.openai);
  secondary.fallback = paced('secondary', PROVIDER_KEYS.custom);
  t.teardown(() => {
    primary.fallback = openAIResponder(PROVIDER_KEYS.openai);
    secondary.fallback = openAIResponder(PROVIDER_KEYS.custom);
  });
  await withGateway({ MODELGATE_MODEL_CATALOG: equal, MODELGATE_ROUTING_STRATEGY: 'performance_optimized', MODELGATE_ROUTING_EXPLORATION: '0.1' }, async (gateway) => {
    const servedBy = async (n: number) => {
      const who: string[] = [];
      for (let i = 0; i < n; i++) who.push((await gateway.client().chat.completions.create(ask).withResponse()).response.headers.get('x-modelgate-provider')!);
      return who;
    };
    const learning = await servedBy(40);
    const fast = learning.slice(-20).filter((p) => p === 'custom').length;
    t.ok(fast >= 14, `custom (fast) served ${fast} of the last 20 (exploration keeps some on the slow one)`);
    slow = 'secondary';
    const after = await servedBy(60);
    const shifted = after.slice(-20).filter((p) => p === 'openai').length;
    t.ok(shifted >= 14, `after the swap openai (now fast) served ${shifted} of the last 20`);
  });
});

t.end();
