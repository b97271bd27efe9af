// The IP filter on a real gateway: blocked and allowed addresses and ranges, IPv4 and IPv6, IPv4
// clients on a dual-stack socket, X-Forwarded-For from trusted proxies only, and bad entries
// failing startup.
import t from 'tap';
import { startGateway, call, type TestGateway } from '../helpers/gateway.js';
import { checkError } from '../helpers/schema.js';
import { ConfigError } from '../../core/config.js';
import { clientAddress, parseRange } from '../../plugins/ip-filter.js';

async function withGateway(env: Record<string, string>, run: (gateway: TestGateway) => Promise<unknown>): Promise<void> {
  const gateway = await startGateway(env);
  try {
    await run(gateway);
  } finally {
    await gateway.close();
  }
}

async function status(gateway: TestGateway, headers: Record<string, string> = {}): Promise<number> {
  return (await call(gateway.url, '/models', { headers })).status;
}

t.test('a blocked IPv4 address gets 403 with an OpenAI error body, even with a valid key', async (t) => {
  await withGateway({ MODELGATE_BLOCKED_IPS: '10.1.2.3, 127.0.0.1' }, async (gateway) => {
    const response = await call(gateway.url, '/models');
    t.equal(response.status, 403);
    t.equal(checkError(response.json), null);
    t.equal(response.json.error.message, 'Access from this IP address is not allowed');
    t.equal(response.json.error.code, 'ip_not_allowed');
    t.ok(response.headers.get('x-request-id'));
  });
});

t.test('a blocked CIDR range covers the addresses inside it and not outside', async (t) => {
  await withGateway({ MODELGATE_BLOCKED_IPS: '127.0.0.0/8' }, async (gateway) => t.equal(await status(gateway), 403));
  await withGateway({ MODELGATE_BLOCKED_IPS: '127.0.1.0/24' }, async (gateway) => t.equal(await status(gateway), 200));
});

t.test('with whitelisting on, only allowed addresses pass; the block list still wins', async (t) => {
  await withGateway({ MODELGATE_IP_WHITELISTING_ENABLED: 'true', MODELGATE_ALLOWED_IPS: '192.168.0.0/16' }, async (gateway) => t.equal(await status(gateway), 403));
  await withGateway({ MODELGATE_IP_WHITELISTING_ENABLED: 'true', MODELGATE_ALLOWED_IPS: '192.168.0.0/16,127.0.0.1' }, async (gateway) => t.equal(await status(gateway), 200));
  await withGateway({ MODELGATE_IP_WHITELISTING_ENABLED: 'true', MODELGATE_ALLOWED_IPS: '127.0.0.0/8', MODELGATE_BLOCKED_IPS: '127.0.0.1' }, async (gateway) =>
    t.equal(await status(gateway), 403),
  );
  await withGateway({ MODELGATE_ALLOWED_IPS: '192.168.0.0/16' }, async (gateway) => t.equal(await status(gateway), 200, 'the allow list needs whitelisting on'));
});

t.test('an IPv6 client is matched against IPv6 addresses and ranges', async (t) => {
  const v6 = { MODELGATE_HOST: '::1' };
  await withGateway({ ...v6, MODELGATE_BLOCKED_IPS: '::1' }, async (gateway) => t.equal(await status(gateway), 403));
  await withGateway({ ...v6, MODELGATE_BLOCKED_IPS: '::/64' }, async (gateway) => t.equal(await status(gateway), 403));
  await withGateway({ ...v6, MODELGATE_BLOCKED_IPS: '2001:db8::/32,127.0.0.1' }, async (gateway) => t.equal(await status(gateway), 200));
  await withGateway({ ...v6, MODELGATE_IP_WHITELISTING_ENABLED: 'true', MODELGATE_ALLOWED_IPS: '::1/128' }, async (gateway) => t.equal(await status(gateway), 200));
});

t.test('an IPv4 client on a dual-stack socket (::ffff:127.0.0.1) matches IPv4 entries, and mapped entries match IPv4 clients', async (t) => {
  const dual = { MODELGATE_HOST: '::' };
  await withGateway({ ...dual, MODELGATE_BLOCKED_IPS: '127.0.0.1' }, async (gateway) => {
    const port = new URL(gateway.url).port;
    t.equal((await call(`http://127.0.0.1:${port}/v1`, '/models')).status, 403);
  });
  await withGateway({ ...dual, MODELGATE_BLOCKED_IPS: '::ffff:127.0.0.0/104' }, async (gateway) => {
    const port = new URL(gateway.url).port;
    t.equal((await call(`http://127.0.0.1:${port}/v1`, '/models')).status, 403);
  });
});

t.test('X-Forwarded-For is ignored unless the peer is a trusted proxy', async (t) => {
  await withGateway({ MODELGATE_BLOCKED_IPS: '203.0.113.0/24' }, async (gateway) => {
    t.equal(await status(gateway, { 'x-forwarded-for': '203.0.113.7' }), 200, 'no trusted proxies: the header is not believed');
  });
  await withGateway({ MODELGATE_BLOCKED_IPS: '203.0.113.0/24', MODELGATE_TRUSTED_PROXIES: '127.0.0.1' }, async (gateway) => {
    t.equal(await status(gateway, { 'x-forwarded-for': '203.0.113.7' }), 403, 'from a trusted proxy the client is the forwarded address');
    t.equal(await status(gateway, { 'x-forwarded-for': '198.51.100.1' }), 200);
    t.equal(await status(gateway, { 'x-forwarded-for': '203.0.113.7, 198.51.100.1' }), 200, 'left of the first untrusted hop, anything may be forged');
    t.equal(await status(gateway, { 'x-forwarded-for': 'not-an-ip' }), 403, 'a trusted hop that is not an address is refused');
  });
  await withGateway({ MODELGATE_IP_WHITELISTING_ENABLED: 'true', MODELGATE_ALLOWED_IPS: '198.51.100.0/24', MODELGATE_TRUSTED_PROXIES: '127.0.0.0/8,10.0.0.0/8' }, async (gateway) => {
    t.equal(await status(gateway, { 'x-forwarded-for': '198.51.100.4, 10.0.0.2' }), 200, 'trusted hops are skipped right to left');
    t.equal(await status(gateway), 403, 'without the header the proxy itself is the client');
  });
});

t.test('the client address is read right to left through trusted proxies', async (t) => {
  const trusted = ['10.0.0.0/8', '::1'].map((entry) => parseRange(entry)!);
  t.equal(clientAddress('10.0.0.1', '1.2.3.4, 5.6.7.8, 10.9.9.9', trusted)?.toString(), '5.6.7.8');
  t.equal(clientAddress('::1', '2001:db8::5', trusted)?.toString(), '2001:db8::5');
  t.equal(clientAddress('::ffff:10.0.0.1', '::ffff:8.8.8.8', trusted)?.toString(), '8.8.8.8', 'mapped addresses read as IPv4');
  t.equal(clientAddress('8.8.4.4', '1.2.3.4', trusted)?.toString(), '8.8.4.4', 'an untrusted peer is the client');
  t.equal(clientAddress('10.0.0.1', '10.0.0.2', trusted)?.toString(), '10.0.0.2', 'all hops trusted: the leftmost');
});

t.test('/v1/health stays open to refused addresses (load balancers probe it); /metrics does not', async (t) => {
  await withGateway({ MODELGATE_BLOCKED_IPS: '127.0.0.1' }, async (gateway) => {
    t.equal((await call(gateway.url, '/health', { key: null })).status, 200);
    const metrics = await fetch(`${gateway.url.replace(/\/v1$/, '')}/metrics`);
    t.equal(metrics.status, 403, 'spend and traffic are not shown to a refused address');
  });
});

t.test('an invalid entry fails startup naming the variable', async (t) => {
  for (const [name, value] of [
    ['MODELGATE_BLOCKED_IPS', '10.0.0.1,10.0.0.300'],
    ['MODELGATE_ALLOWED_IPS', '10.0.0.0/33'],
    ['MODELGATE_TRUSTED_PROXIES', 'proxy.local'],
    ['MODELGATE_BLOCKED_IPS', '2001:db8::/129'],
    ['MODELGATE_ALLOWED_IPS', '10.1'],
  ] as const) {
    const error = await startGateway({ [name]: value }).then(
      async (gateway) => gateway.close(),
      (thrown: unknown) => thrown,
    );
    t.ok(error instanceof ConfigError, `${name}=${value} fails startup`);
    t.match((error as Error | undefined)?.message, name, 'naming the variable');
  }
});

t.end();
