// Model names a client invents (the custom provider with unpriced models allowed takes any): a name
// past the limit is refused before anything is called or billed, and thousands of distinct
// allowed names leave the per-model maps and the metrics' label values bounded.
import t, { type Test } from 'tap';
import { startGateway, call, type TestGateway } from '../helpers/gateway.js';
import { FakeProvider, fixtureJson, json } from '../helpers/fake-provider.js';
import { scrape } from '../helpers/metrics.js';
import { MAX_MODEL_NAME_LENGTH } from '../../core/chat-request.js';
import { MAX_TRACKED_MODELS } from '../../core/health.js';

let upstream: FakeProvider;
let gateway: TestGateway;

/** A fake compatible server and the gateway in front of it, closed when `t` ends (a listening server keeps tap's root test open). */
async function start(t: Test): Promise<void> {
  upstream = await FakeProvider.start(json(200, fixtureJson('openai/chat.json')));
  gateway = await startGateway({
    CUSTOM_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_ALLOW_UNPRICED_MODELS: 'true',
    MODELGATE_RATE_LIMITING_ENABLED: 'false',
    MODELGATE_CACHE_ENABLED: 'false',
    MODELGATE_RETRIES: '0',
  });
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
}

/** `custom/` and a name padded with its number to exactly `length` characters in all. */
const modelName = (i: number, length: number) => `custom/${String(i).padStart(length - 'custom/'.length, 'm')}`;
const ask = (model: string) => call(gateway.url, '/chat/completions', { body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }) });

t.test('the custom provider with unpriced models allowed', async (t) => {
  await start(t);

  t.test('a model name over the limit is a 400 naming `model`, and reaches no provider', async (t) => {
    upstream.reset();
    const response = await ask(modelName(0, MAX_MODEL_NAME_LENGTH + 1));
    t.equal(response.status, 400);
    t.equal(response.json?.error.param, 'model');
    t.match(response.json?.error.message, /more than 256 characters/);
    t.equal(upstream.requests.length, 0);
    const fits = await ask(modelName(0, MAX_MODEL_NAME_LENGTH));
    t.equal(fits.status, 200, 'a name of exactly the limit is served');
    t.equal(fits.headers.get('x-modelgate-model'), modelName(0, MAX_MODEL_NAME_LENGTH).slice('custom/'.length));
  });

  t.test('a fallback model name over the limit is refused the same way', async (t) => {
    const response = await call(gateway.url, '/chat/completions', {
      body: JSON.stringify({ model: 'custom/a', messages: [{ role: 'user', content: 'hi' }], modelgate: { failover: { fallback_models: ['x'.repeat(MAX_MODEL_NAME_LENGTH + 1)] } } }),
    });
    t.equal(response.status, 400);
    t.equal(response.json?.error.param, 'modelgate.failover.fallback_models.0');
  });

  t.test('2,000 distinct long model names: per-model maps and metric labels stay bounded', async (t) => {
    const REQUESTS = 2000;
    const CONCURRENCY = 8;
    let next = 0;
    let ok = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < REQUESTS) if ((await ask(modelName(next++, MAX_MODEL_NAME_LENGTH))).status === 200) ok++;
      }),
    );
    t.equal(ok, REQUESTS);
    const sizes = gateway.app.deps.health.sizes();
    t.ok(sizes.averages <= MAX_TRACKED_MODELS, `${sizes.averages} latency averages for ${REQUESTS} models`);
    const metrics = await scrape(gateway.url);
    const models = new Set(metrics.series('modelgate_requests_total').map((sample) => sample.labels.model));
    t.same([...models].sort(), ['none', 'other'], 'every invented name is labelled other (none: the scrapes)');
  });
});
