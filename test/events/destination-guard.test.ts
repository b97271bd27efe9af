// The SSRF guard: every non-public range is named, IPv6 forms that carry an IPv4 address are judged
// by it, and registration checks resolve the host (only IP literals and localhost here: no DNS).
import t from 'tap';
import { blockedAddress, checkWebhookUrl, guardedLookup } from '../../plugins/events/destination-guard.js';

t.test('each non-public IPv4 range is blocked with its reason', async (t) => {
  const cases: [string, string][] = [
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.0.0.5', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade-nat'],
    ['100.127.255.254', 'carrier-grade-nat'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'reserved'],
    ['198.51.100.1', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
  ];
  for (const [ip, reason] of cases) t.equal(blockedAddress(ip), reason, ip);
});

t.test('each non-public IPv6 range is blocked with its reason', async (t) => {
  const cases: [string, string][] = [
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['ff02::1', 'multicast'],
    ['fec0::1', 'site-local'],
    ['2001:db8::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['::7f00:1', 'reserved'],
    ['100::1', 'reserved'],
    ['64:ff9b:1::a00:1', 'reserved'],
  ];
  for (const [ip, reason] of cases) t.equal(blockedAddress(ip), reason, ip);
});

t.test('IPv6 addresses that embed an IPv4 address are judged by it', async (t) => {
  t.equal(blockedAddress('::ffff:127.0.0.1'), 'loopback', 'IPv4-mapped');
  t.equal(blockedAddress('::ffff:7f00:1'), 'loopback', 'IPv4-mapped, hex form');
  t.equal(blockedAddress('::ffff:169.254.169.254'), 'link-local');
  t.equal(blockedAddress('::ffff:0:10.0.0.1'), 'private', 'RFC 6145 translated');
  t.equal(blockedAddress('64:ff9b::10.0.0.1'), 'private', 'NAT64 well-known prefix');
  t.equal(blockedAddress('64:ff9b::7f00:1'), 'loopback');
  t.equal(blockedAddress('2002:c0a8:0101::1'), 'private', '6to4 of 192.168.1.1');
  t.equal(blockedAddress('::ffff:93.184.216.34'), undefined);
  t.equal(blockedAddress('64:ff9b::8.8.8.8'), undefined);
  t.equal(blockedAddress('2002:0808:0808::1'), undefined);
});

t.test('public addresses and what is not an address', async (t) => {
  for (const ip of ['93.184.216.34', '8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '2a00:1450:4001::1']) t.equal(blockedAddress(ip), undefined, ip);
  t.equal(blockedAddress('not-an-ip'), 'invalid');
  t.equal(blockedAddress(''), 'invalid');
});

t.test('checkWebhookUrl refuses literal and resolved private addresses, naming the reason', async (t) => {
  t.equal(
    await checkWebhookUrl('http://10.0.0.5/hook', false),
    'The webhook URL resolves to a private address; set MODELGATE_WEBHOOK_ALLOW_PRIVATE=true to allow it',
  );
  t.match(await checkWebhookUrl('https://127.0.0.1:8443/x', false), /a loopback address;/);
  t.match(await checkWebhookUrl('http://[::1]:8080/x', false), /a loopback address;/, 'bracketed IPv6');
  t.match(await checkWebhookUrl('http://[::ffff:169.254.169.254]/latest', false), /link-local/);
  t.match(await checkWebhookUrl('http://169.254.169.254/latest/meta-data', false), /link-local/);
  t.match(await checkWebhookUrl('http://0.0.0.0:80/', false), /an unspecified address/);
  t.match(await checkWebhookUrl('http://2130706433/', false), /loopback/, 'a decimal IPv4 is normalised by the URL parser');
  t.match(await checkWebhookUrl('http://localhost:3000/hook', false), /loopback/, 'a name is resolved');
});

t.test('checkWebhookUrl lets a public literal through without the network', async (t) => {
  t.equal(await checkWebhookUrl('https://93.184.216.34/hooks?token=abc', false), undefined);
  t.equal(await checkWebhookUrl('http://[2606:4700:4700::1111]:8080/', false), undefined);
});

t.test('checkWebhookUrl refuses malformed URLs before resolving anything', async (t) => {
  t.match(await checkWebhookUrl('ftp://93.184.216.34/', false), /http or https/);
  t.match(await checkWebhookUrl('file:///etc/passwd', false), /http or https/);
  t.match(await checkWebhookUrl('not a url', false), /not a valid/);
  t.match(await checkWebhookUrl('https://user:pass@93.184.216.34/', false), /credentials/);
  t.match(await checkWebhookUrl('https://user@93.184.216.34/', false), /credentials/);
  t.match(await checkWebhookUrl(`https://93.184.216.34/${'a'.repeat(2048)}`, false), /longer than 2048/);
  t.match(await checkWebhookUrl('https://user:pass@10.0.0.1/', true), /credentials/, 'allowPrivate does not allow credentials');
});

t.test('a name that does not resolve is refused with a message saying so', async (t) => {
  t.equal(await checkWebhookUrl('https://no-such-host.invalid/hook', false), "The webhook URL's host no-such-host.invalid does not resolve");
});

t.test('allowPrivate skips resolution', async (t) => {
  t.equal(await checkWebhookUrl('http://127.0.0.1:9000/hook', true), undefined);
  t.equal(await checkWebhookUrl('http://[fd00::1]/', true), undefined);
  t.equal(await checkWebhookUrl('https://no-such-host.invalid/hook', true), undefined, 'not even looked up');
});

function lookup(hostname: string, all: boolean) {
  return new Promise<{ error: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) =>
    guardedLookup(hostname, { all }, (error, address, family) => resolve({ error, address, family })),
  );
}

t.test('guardedLookup fails with EBLOCKED for a blocked answer', async (t) => {
  for (const all of [false, true]) {
    const { error } = await lookup('localhost', all);
    t.match(error, { code: 'EBLOCKED', reason: 'loopback', message: 'address blocked: loopback' }, `all: ${all}`);
  }
});

t.test('guardedLookup answers like dns.lookup for a public address', async (t) => {
  t.same(await lookup('93.184.216.34', false), { error: null, address: '93.184.216.34', family: 4 });
  const { error, address } = await lookup('93.184.216.34', true);
  t.equal(error, null);
  t.same(address, [{ address: '93.184.216.34', family: 4 }]);
});

t.test('guardedLookup passes resolution errors on', async (t) => {
  const { error } = await lookup('no-such-host.invalid', false);
  t.match(error, { code: /ENOTFOUND|EAI_AGAIN/ });
});
