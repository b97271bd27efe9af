// Per-key metrics with a bounded key_id label: requests and cost per key for at most
// MODELGATE_METRICS_MAX_KEYS keys, the rest as key_id="other"; a key idle long enough gives its
// place (and its series) up to a new one, so the number of series never grows with the keys.
import t from 'tap';
import { startGateway, call, PROTOCOL_ONLY, GATEWAY_KEY } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { scrape } from '../helpers/metrics.js';

const METRICS_TOKEN = 'metrics-token-0123456789';
import { chatRequest, FIXTURE_COST, near, testCatalog } from '../helpers/money.js';
import { keyStore } from '../helpers/keys.js';
import { KeyLabels, OTHER_KEY } from '../../plugins/metrics/key-labels.js';

t.test('at most MODELGATE_METRICS_MAX_KEYS keys have series of their own; the rest count as other', async (t) => {
  const upstream = await startFakeOpenAI();
  const secrets = ['uc_one_0123456789abcdefghijkl', 'uc_two_0123456789abcdefghijkl', 'uc_three_0123456789abcdefghij', 'uc_four_0123456789abcdefghijk'];
  const gateway = await startGateway(
    { ...PROTOCOL_ONLY, OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_MODEL_CATALOG: testCatalog(), MODELGATE_METRICS_MAX_KEYS: '2', MODELGATE_METRICS_TOKEN: METRICS_TOKEN },
    { keyStores: [keyStore(Object.fromEntries(secrets.map((secret) => [secret, {}])))] },
  );
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  for (const key of secrets) t.equal((await call(gateway.url, '/chat/completions', { key, body: JSON.stringify(chatRequest(16)) })).status, 200);
  await call(gateway.url, '/models', { key: secrets[0] });

  const metrics = await scrape(gateway.url, METRICS_TOKEN);
  const series = metrics.series('modelgate_key_requests_total');
  t.same(series.map((sample) => sample.labels.key_id).sort(), ['one_0123456789abcdefghijkl', 'other', 'two_0123456789abcdefghijkl'], 'two keys and other: three series for four keys');
  t.equal(metrics.value('modelgate_key_requests_total', { key_id: 'one_0123456789abcdefghijkl' }), 2);
  t.equal(metrics.value('modelgate_key_requests_total', { key_id: 'other' }), 2);
  t.ok(near(metrics.value('modelgate_key_cost_usd_total', { key_id: 'two_0123456789abcdefghijkl' })!, FIXTURE_COST), 'cost per key');
  t.ok(near(metrics.value('modelgate_key_cost_usd_total', { key_id: 'other' })!, 2 * FIXTURE_COST));
  t.notOk(metrics.text.includes(GATEWAY_KEY) || secrets.some((secret) => metrics.text.includes(secret)), 'no secret in the metrics');
});

t.test('without MODELGATE_METRICS_TOKEN, /metrics is open, so no key has a series of its own: all count as other', async (t) => {
  const upstream = await startFakeOpenAI();
  const secrets = ['uc_one_0123456789abcdefghijkl', 'uc_two_0123456789abcdefghijkl'];
  const gateway = await startGateway(
    { ...PROTOCOL_ONLY, OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_MODEL_CATALOG: testCatalog() },
    { keyStores: [keyStore(Object.fromEntries(secrets.map((secret) => [secret, {}])))] },
  );
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  for (const key of secrets) t.equal((await call(gateway.url, '/chat/completions', { key, body: JSON.stringify(chatRequest(16)) })).status, 200);
  const metrics = await scrape(gateway.url);
  t.same(metrics.series('modelgate_key_requests_total').map((sample) => sample.labels.key_id), ['other'], "one aggregate series: no caller reads another key's spend");
  t.equal(metrics.value('modelgate_key_requests_total', { key_id: 'other' }), 2);
});

t.test('a key idle for longer than the idle time gives its place up to a new key, whose series replaces it', async (t) => {
  const dropped: string[] = [];
  const labels = new KeyLabels(2, (keyId) => dropped.push(keyId), 1000);
  t.equal(labels.label('a', 0), 'a');
  t.equal(labels.label('b', 100), 'b');
  t.equal(labels.label('c', 500), OTHER_KEY, 'full, and nobody idle long enough');
  t.equal(labels.label('a', 900), 'a', 'a is active again');
  t.equal(labels.label('c', 1200), 'c', 'b, idle since 100, gives its place up');
  t.same(dropped, ['b']);
  t.equal(labels.label('b', 1300), OTHER_KEY, 'b, back while the set is full, counts as other');
  t.equal(new KeyLabels(0, () => undefined).label('a'), OTHER_KEY, 'with 0, every key is other');
});

t.test("a key's place is refreshed at most every idle time / 600, so it may go that much early, never later", async (t) => {
  const dropped: string[] = [];
  const labels = new KeyLabels(1, (keyId) => dropped.push(keyId), 6000); // refreshed every 10 ms at most
  t.equal(labels.label('a', 0), 'a');
  t.equal(labels.label('a', 9), 'a', 'seen again within 10 ms: its place is not refreshed');
  t.equal(labels.label('b', 6005), 'b', 'idle for 6000 ms as of its last refresh: a gives its place up');
  t.same(dropped, ['a']);
  t.equal(labels.label('b', 6015), 'b', 'refreshed');
  t.equal(labels.label('c', 12010), OTHER_KEY, 'b, refreshed at 6015, is not idle yet');
});
