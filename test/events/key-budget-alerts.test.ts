// A key's own budget has alert rules too, in memory and with Redis: crossing a threshold of the
// key's daily limit sends budget.threshold_reached with scope `key` and the key's id, once; the
// gateway's budgets are untouched by it; reaching the key's limit refuses its requests and sends
// budget.exceeded for the key, once.
import t from 'tap';
import { startGateway, call, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { startFakeOpenAI, openAIResponder, PROVIDER_KEYS } from '../helpers/fakes.js';
import type { FakeProvider } from '../helpers/fake-provider.js';
import { testPrefix, redisEnv, flushPrefix } from '../helpers/redis.js';
import { chatRequest, FIXTURE_COST, testCatalog } from '../helpers/money.js';
import { waitFor } from '../helpers/receivers.js';
import type { Notification } from '../../core/events.js';

let upstream: FakeProvider;
const prefix = testPrefix();
t.before(async () => {
  upstream = await startFakeOpenAI();
  upstream.fallback = openAIResponder();
});
t.teardown(async () => {
  await upstream.close();
  await flushPrefix(prefix);
});

for (const store of ['memory', 'redis'] as const) {
  t.test(`${store}: a key's threshold and its exceeded limit are each said once, for the key`, async (t) => {
    const gateway = await startGateway({
      ...PROTOCOL_ONLY,
      ...(store === 'redis' ? { ...redisEnv(prefix), MODELGATE_STORE: 'redis', REDIS_COMMAND_TIMEOUT: '5000' } : {}),
      OPENAI_API_KEY: PROVIDER_KEYS.openai,
      OPENAI_BASE_URL: `${upstream.url}/v1`,
      MODELGATE_MODEL_CATALOG: testCatalog(),
      MODELGATE_LEDGER_FLUSH_INTERVAL: '100',
      MODELGATE_DAILY_COST_LIMIT: '1000',
      MODELGATE_ALERT_RULES: '0.5:chat,0.75:email,1:pause',
    });
    t.teardown(() => gateway.close());
    const sent: Notification[] = [];
    gateway.app.deps.events.on('notify', (n) => sent.push(n));
    const created = await call(gateway.url, '/admin/keys', { method: 'POST', body: JSON.stringify({ name: 'capped', limits: { daily_cost_limit: 4 * FIXTURE_COST } }) });
    t.equal(created.status, 201);
    const key = created.json.key as string;
    const keyId = created.json.id as string;
    const send = () => call(gateway.url, '/chat/completions', { key, body: JSON.stringify(chatRequest(8)) });
    for (let i = 0; i < 2; i++) t.equal((await send()).status, 200);
    t.ok(await waitFor(() => sent.some((n) => n.type === 'budget.threshold_reached'), 5000), 'half of the key budget');
    t.match(sent.find((n) => n.type === 'budget.threshold_reached')!.data, { scope: 'key', key_id: keyId, period: 'day', threshold: 0.5, action: 'chat' });
    t.equal((await send()).status, 200);
    t.equal((await send()).status, 200);
    t.ok(await waitFor(() => sent.filter((n) => n.type === 'budget.threshold_reached').length === 2, 5000), 'three quarters');
    for (let i = 0; i < 5; i++) t.equal((await send()).status, 429, 'the key is at its limit');
    t.ok(await waitFor(() => sent.some((n) => n.type === 'budget.exceeded'), 5000));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const reached = sent.filter((n) => n.type === 'budget.threshold_reached').map((n) => n.data);
    t.same(
      reached.map((d) => [d.scope, d.key_id, d.threshold]),
      [
        ['key', keyId, 0.5],
        ['key', keyId, 0.75],
      ],
      'each rule once, none for the pause rule, none for the gateway',
    );
    const exceeded = sent.filter((n) => n.type === 'budget.exceeded');
    t.equal(exceeded.length, 1, 'exceeded once for five refusals');
    t.match(exceeded[0]!.data, { scope: 'key', key_id: keyId, period: 'day' });
    t.notOk(
      sent.some((n) => n.type === 'budget.paused'),
      'a key budget is a cap, not a pause',
    );
  });
}
