// Alerts read from traffic, on a real database, with time given: a provider whose calls all fail
// for a minute is down once (three replicas judging together send one alert) and recovers once;
// the error rate fires past its threshold with enough requests and resolves below it; a thousand
// refusals of the rate limit on two replicas become one event per key and minute with their sum,
// sent once the minute is over; a breaker opening on several replicas is one event.
import t from 'tap';
import { pino } from 'pino';
import { ENGINES, openTestStore } from '../helpers/database.js';
import { AlertStates } from '../../core/alert-states.js';
import type { Notification } from '../../core/events.js';
import type { RequestContext } from '../../core/context.js';
import { TrafficAlerts, DOWN_MIN_CALLS } from '../../plugins/events/traffic-alerts.js';
import type { Store } from '../../core/store/database.js';

const silent = pino({ level: 'silent' });
const T0 = Date.UTC(2026, 10, 26, 12, 0, 0);

function traffic(store: Store, sent: Notification[], over: Partial<ConstructorParameters<typeof TrafficAlerts>[0]> = {}): TrafficAlerts {
  return new TrafficAlerts({ store, states: new AlertStates(store), logger: silent, notify: (n) => sent.push(n), alerts: true, cooldownMs: 300_000, errorRate: 0.25, errorRateMinRequests: 20, ...over });
}

const target = (provider: string) => ({ provider: { name: provider }, model: { id: 'm' } });

function request(provider: string, status: number, failedCalls = 0, keyId = 'key_a', kind?: string): RequestContext {
  return {
    status,
    principal: { keyId },
    error: kind ? { kind } : undefined,
    outcome: {
      target: status < 400 ? target(provider) : undefined,
      attempts: failedCalls + (status < 400 ? 1 : 0),
      failedAttempts: Array.from({ length: failedCalls }, () => ({ target: target(provider), reason: 'server_error', upstreamStatus: 503 })),
    },
  } as unknown as RequestContext;
}

for (const engine of ENGINES) {
  t.test(`${engine}: a provider down on three replicas alerts once, and recovers once`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const sent: Notification[] = [];
    const replicas = [traffic(store, sent), traffic(store, sent), traffic(store, sent)];
    for (const replica of replicas) for (let i = 0; i < DOWN_MIN_CALLS; i++) replica.observe(request('anthropic', 502, 1), T0 + i);
    await Promise.all(replicas.map((replica) => replica.tick(T0 + 6000)));
    const down = sent.filter((n) => n.type === 'provider.down');
    t.equal(down.length, 1, 'one alert');
    t.match(down[0]!.data, { provider: 'anthropic', failures: DOWN_MIN_CALLS, window_seconds: 60, last_error: 'server_error (HTTP 503)' });
    await Promise.all(replicas.map((replica) => replica.tick(T0 + 11_000)));
    t.equal(sent.filter((n) => n.type === 'provider.down').length, 1, 'not again while down');

    replicas[1]!.observe(request('anthropic', 200), T0 + 12_000);
    await Promise.all(replicas.map((replica) => replica.tick(T0 + 16_000)));
    const recovered = sent.filter((n) => n.type === 'provider.recovered');
    t.equal(recovered.length, 1, 'recovered once');
    t.equal(recovered[0]!.data.down_since, new Date(T0 + 6000).toISOString());
    // Down again at once: within the cool-down, no alert.
    for (let i = 0; i < 10; i++) replicas[0]!.observe(request('anthropic', 502, 1), T0 + 70_000 + i);
    await replicas[0]!.tick(T0 + 75_000);
    t.equal(sent.filter((n) => n.type === 'provider.down').length, 1, 'flapping within the cool-down is quiet');
    t.equal(
      sent.filter((n) => n.type === 'provider.down' && n.data.provider !== 'anthropic').length,
      0,
    );
  });

  t.test(`${engine}: the error rate fires past its threshold with enough requests, and resolves below it`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const sent: Notification[] = [];
    const replica = traffic(store, sent);
    for (let i = 0; i < 10; i++) replica.observe(request('openai', 500), T0);
    await replica.tick(T0 + 1000);
    t.same(sent, [], 'ten requests are too few to judge');
    for (let i = 0; i < 20; i++) replica.observe(request('openai', 200), T0 + 2000);
    await replica.tick(T0 + 3000);
    t.equal(sent.length, 1);
    t.match(sent[0], { type: 'error_rate.high', data: { requests: 30, errors: 10, threshold: 0.25, window_seconds: 300 } });
    for (let i = 0; i < 30; i++) replica.observe(request('openai', 200), T0 + 4000);
    await replica.tick(T0 + 5000);
    t.equal(sent.length, 2);
    t.match(sent[1], { type: 'error_rate.resolved', data: { requests: 60, errors: 10 } });
  });

  t.test(`${engine}: an idle replica does not resolve the error rate a busy one fired`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const sent: Notification[] = [];
    const busy = traffic(store, sent);
    const idle = traffic(store, sent);
    for (let i = 0; i < 30; i++) busy.observe(request('openai', i % 2 ? 500 : 200), T0);
    await busy.tick(T0 + 1000);
    await idle.tick(T0 + 2000);
    idle.observe(request('openai', 200), T0 + 2500);
    await idle.tick(T0 + 3000);
    t.same(
      sent.map((n) => n.type),
      ['error_rate.high'],
      'too few requests to judge: still high',
    );
  });

  t.test(`${engine}: a thousand refusals on two replicas are one event per key and minute, with their sum`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const sent: Notification[] = [];
    const a = traffic(store, sent, { alerts: false });
    const b = traffic(store, sent, { alerts: false });
    for (let i = 0; i < 600; i++) a.observe(request('openai', 429, 0, 'key_a', 'rate_limit_exceeded'), T0 + 1000 + i);
    for (let i = 0; i < 400; i++) b.observe(request('openai', 429, 0, i % 2 ? 'key_a' : 'key_b', 'rate_limit_exceeded'), T0 + 2000 + i);
    await Promise.all([a.tick(T0 + 30_000), b.tick(T0 + 30_000)]);
    t.same(sent, [], 'nothing while the minute lasts');
    await Promise.all([a.tick(T0 + 61_000), b.tick(T0 + 61_000)]);
    t.same(sent, [], 'nor before every replica had time to add its own');
    await Promise.all([a.tick(T0 + 76_000), b.tick(T0 + 76_000)]);
    const byKey = Object.fromEntries(sent.map((n) => [n.data.key_id, n.data]));
    t.equal(sent.length, 2, 'one event per key');
    t.same(byKey.key_a, { key_id: 'key_a', minute: new Date(T0).toISOString(), refused: 800 });
    t.same(byKey.key_b, { key_id: 'key_b', minute: new Date(T0).toISOString(), refused: 200 });
    await Promise.all([a.tick(T0 + 90_000), b.tick(T0 + 90_000)]);
    t.equal(sent.length, 2, 'sent once');
  });

  t.test(`${engine}: a breaker opening on several replicas is one event; its closing another`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const sent: Notification[] = [];
    const replicas = [traffic(store, sent), traffic(store, sent)];
    await Promise.all(replicas.map((replica) => replica.circuit('openai', 'open', 30_000)));
    await Promise.all(replicas.map((replica) => replica.circuit('openai', 'closed', 30_000)));
    t.same(
      sent.map((n) => n.type),
      ['provider.circuit_opened', 'provider.circuit_closed'],
    );
    t.same(sent[0]!.data, { provider: 'openai', recovery_ms: 30_000 });
  });
}
