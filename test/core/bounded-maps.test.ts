// Every in-process map keyed by something a client chooses (a model name, a retry delay) or by
// time (a budget period) stays within its bound however many distinct keys arrive
// (docs/security.md, "Bounded memory").
import t from 'tap';
import { pino } from 'pino';
import { HealthRegistry, MAX_TRACKED_MODELS } from '../../core/health.js';
import { MAX_RETRY_POLICIES, RetryPolicies } from '../../plugins/failover/policies.js';
import { Alerts, parseRules } from '../../plugins/cost/alerts.js';
import { currentPeriods } from '../../plugins/cost/periods.js';
import { EventBus } from '../../core/events.js';
import type { BudgetStore } from '../../plugins/cost/budget-store.js';
import { addressGroup, ConnectionCap } from '../../core/connections.js';
import { createServer } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

const PAST_BOUND = 3 * MAX_TRACKED_MODELS;

t.test('latency averages per provider+model keep the most recently used models only', async (t) => {
  const health = new HealthRegistry();
  health.record({ provider: 'custom', model: 'kept', stream: false, ok: true, latencyMs: 100 });
  for (let i = 0; i < PAST_BOUND; i++) {
    health.record({ provider: 'custom', model: `model-${i}`, stream: i % 2 === 0, ok: true, latencyMs: 10 });
    if (i % 100 === 0) health.modelLatency('custom', 'kept', false); // read by the router: recently used
  }
  t.ok(health.sizes().averages <= MAX_TRACKED_MODELS, `${health.sizes().averages} averages`);
  t.equal(health.modelLatency('custom', 'kept', false)?.value, 100, 'a model in use keeps its average');
  t.equal(health.modelLatency('custom', 'model-0', true), undefined, 'the least recently used are forgotten');
  t.ok(health.providerLatency('custom', false), "the provider's own average is kept apart, never evicted by models");
});

t.test('Retry-After cooldowns per provider+model are bounded, the latest kept', async (t) => {
  const health = new HealthRegistry();
  for (let i = 0; i < PAST_BOUND; i++) health.coolDown('custom', `model-${i}`, 60_000);
  t.ok(health.sizes().cooldowns <= MAX_TRACKED_MODELS, `${health.sizes().cooldowns} cooldowns`);
  t.ok(health.cooldownRemaining('custom', `model-${PAST_BOUND - 1}`) > 0, 'the newest cooldown holds');
});

t.test('retry policies made for clients’ own delays are bounded', async (t) => {
  const policies = new RetryPolicies(new HealthRegistry());
  for (let delay = 0; delay < 10 * MAX_RETRY_POLICIES; delay++) policies.get({ attempts: 1, delayMs: delay, multiplier: 2, exponential: true }, false);
  t.ok(policies.size <= MAX_RETRY_POLICIES, `${policies.size} policies`);
  const usual = { attempts: 2, delayMs: 1000, multiplier: 2, exponential: true };
  t.equal(policies.get(usual, false), policies.get(usual, false), 'the same configuration reuses its policy');
});

t.test('alert rules remembered as fired are those of the current periods only', async (t) => {
  const store = { fireOnce: async () => false } as unknown as BudgetStore;
  const rules = parseRules(['0.5:email', '0.9:webhook']);
  const alerts = new Alerts(rules, store, new EventBus(), pino({ level: 'silent' }));
  const limits = { day: 1, week: 1, month: 1 };
  const DAY = 86_400_000;
  const start = Date.UTC(2026, 0, 1);
  for (let day = 0; day < 400; day++) await alerts.evaluate(currentPeriods(start + day * DAY), limits, limits);
  t.ok(alerts.remembered <= 3 * rules.length, `${alerts.remembered} remembered after 400 days`);
});

t.test('open connections per client address hold only addresses with a connection open', async (t) => {
  const server = createServer();
  const cap = new ConnectionCap(server, 100, 3);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const { port } = server.address() as AddressInfo;
  const sockets = await Promise.all(
    Array.from({ length: 20 }, (_, i) => new Promise<Socket>((resolve) => {
      const socket = connect({ port, host: '127.0.0.1', localAddress: `127.0.1.${i + 1}` }, () => resolve(socket));
    })),
  );
  for (let i = 0; i < 50 && cap.addresses < 20; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  t.equal(cap.addresses, 20, 'one entry per address connected');
  for (const socket of sockets) socket.destroy();
  for (let i = 0; i < 100 && cap.addresses > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  t.equal(cap.addresses, 0, 'none left once they closed');
});

t.test('IPv6 clients are counted by their /64, IPv4-mapped ones as IPv4', async (t) => {
  t.equal(addressGroup('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  t.equal(addressGroup('2001:DB8:1:2:ffff:1:2:3'), '2001:db8:1:2::/64', 'every address of one /64 is one client');
  t.equal(addressGroup('2001:db8::1'), '2001:db8:0:0::/64');
  t.equal(addressGroup('::1'), '0:0:0:0::/64');
  t.equal(addressGroup('fe80::1%eth0'), 'fe80:0:0:0::/64');
  t.equal(addressGroup('::ffff:10.1.2.3'), '10.1.2.3');
  t.equal(addressGroup('192.0.2.7'), '192.0.2.7');
});

