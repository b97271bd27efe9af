// /metrics shows how many active keys expire within 7 days (issue 14: with rotation on, operators
// see keys about to expire before clients meet "API key expired").
import t from 'tap';
import { startGateway, call } from '../helpers/gateway.js';

async function gauge(url: string): Promise<number> {
  const text = await (await fetch(`${new URL(url).origin}/metrics`)).text();
  const line = /^modelgate_api_keys_expiring_soon (\d+)$/m.exec(text);
  return line ? Number(line[1]) : NaN;
}

t.test('modelgate_api_keys_expiring_soon counts active keys expiring within 7 days, refreshed on every key change', async (t) => {
  const gateway = await startGateway({ MODELGATE_API_KEY_ROTATION_ENABLED: 'true', MODELGATE_API_KEY_ROTATION_INTERVAL: '3' });
  t.teardown(() => gateway.close());
  t.equal(await gauge(gateway.url), 0, 'no key yet');
  const created = await call(gateway.url, '/admin/keys', { body: JSON.stringify({ name: 'soon' }) });
  t.equal(created.status, 201);
  await call(gateway.url, '/admin/keys', { body: JSON.stringify({ name: 'also soon' }) });
  await gateway.app.deps.keyStats.refresh();
  t.equal(await gauge(gateway.url), 2, 'both expire in 3 days under rotation');
  const revoked = await call(gateway.url, `/admin/keys/${created.json.id}`, { method: 'DELETE' });
  t.equal(revoked.status, 200);
  await gateway.app.deps.keyStats.refresh();
  t.equal(await gauge(gateway.url), 1, 'a revoked key is not counted');
});
