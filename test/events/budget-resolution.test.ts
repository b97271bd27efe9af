// The resolved half of budget alerts, on a real database: a rule that fired in a period that is
// over is resolved once (budget.threshold_resolved, period_reset) however many replicas look; an
// expired pause says budget.resumed (period_reset); an admin's resume resolves the pause rules of the
// periods in force (admin_resume); a key's rules resolve with their scope. Events are routed: a threshold
// to its rule's channel, other alerts to every alert channel, non-alerts to none.
import t from 'tap';
import { pino } from 'pino';
import { ENGINES, openTestStore } from '../helpers/database.js';
import { EventBus, type Notification } from '../../core/events.js';
import { BudgetRecords } from '../../plugins/cost/budget-records.js';
import { AlertResolution } from '../../plugins/cost/alert-resolution.js';
import { currentPeriods } from '../../plugins/cost/periods.js';
import { alertChannelsOf, type AlertChannel } from '../../plugins/events/fan-out.js';

const silent = pino({ level: 'silent' });

t.test('alerts are routed to the channels their rule or their kind names', async (t) => {
  const all = new Set<AlertChannel>(['email', 'chat', 'alert_webhook']);
  const threshold = (action: string): Notification => ({ type: 'budget.threshold_reached', data: { action } });
  t.same(alertChannelsOf(threshold('email'), all), ['email']);
  t.same(alertChannelsOf(threshold('webhook'), all), ['alert_webhook']);
  t.same(alertChannelsOf(threshold('pause'), all), [], 'a pause speaks through budget.paused');
  t.same(alertChannelsOf(threshold('chat'), new Set<AlertChannel>(['email'])), [], 'a channel that is off');
  t.same(alertChannelsOf({ type: 'budget.paused', data: {} }, all), [...all]);
  t.same(alertChannelsOf({ type: 'provider.down', data: {} }, all), [...all]);
  t.same(alertChannelsOf({ type: 'key.created', data: {} }, all), [], 'not an alert');
  t.same(alertChannelsOf({ type: 'no.such.type', data: {} }, all), []);
});

for (const engine of ENGINES) {
  t.test(`${engine}: thresholds resolve once when their period ends; pauses say they ended`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const records = new BudgetRecords(store);
    const now = Date.now();
    const today = currentPeriods(now);
    const yesterday = currentPeriods(now - 86_400_000);
    await records.fire(`day:${yesterday.day.key}`, '0.5:email');
    await records.fire(`day:${yesterday.day.key}`, '0.8:email', undefined, 'key:key_x');
    await records.fire(`day:${today.day.key}`, '0.8:chat');
    await records.fire(`day:${yesterday.day.key}`, '1:pause', { period: 'day', periodKey: yesterday.day.key, threshold: 1, until: now - 1000 });
    const bus = new EventBus();
    const sent: Notification[] = [];
    bus.on('notify', (n) => sent.push(n));
    const replicas = [new AlertResolution(store, bus, silent), new AlertResolution(store, bus, silent), new AlertResolution(store, bus, silent)];
    await Promise.all(replicas.map((r) => r.tick(now)));
    const resolved = sent.filter((n) => n.type === 'budget.threshold_resolved').map((n) => n.data);
    t.same(
      resolved.map((d) => `${d.threshold}:${d.action}`).sort(),
      ['0.5:email', '0.8:email', '1:pause'],
      "yesterday's rules, once each; today's stays open",
    );
    t.match(
      resolved.find((d) => d.scope === 'key'),
      { key_id: 'key_x', threshold: 0.8 },
      "a key's rule, in its scope",
    );
    t.match(resolved[0], { scope: 'global', key_id: null, period: 'day', period_key: yesterday.day.key, reason: 'period_reset' });
    const resumed = sent.filter((n) => n.type === 'budget.resumed');
    t.equal(resumed.length, 1, 'the expired pause, once');
    t.same(resumed[0]!.data, { scope: 'global', period: 'day', period_key: yesterday.day.key, reason: 'period_reset' });
    await replicas[0]!.tick(now + 1000);
    t.equal(sent.length, 4, 'nothing twice');
  });

  t.test(`${engine}: many open markers of the current period do not hold back a past period's resolution`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const records = new BudgetRecords(store);
    const now = Date.now();
    const month = currentPeriods(now).month.key;
    for (let i = 0; i < 520; i++) await records.fire(`month:${month}`, '0.5:chat', undefined, `key:key_${i}`);
    const yesterday = currentPeriods(now - 86_400_000).day.key;
    await records.fire(`day:${yesterday}`, '0.5:chat');
    const bus = new EventBus();
    const sent: Notification[] = [];
    bus.on('notify', (n) => sent.push(n));
    await new AlertResolution(store, bus, silent).tick(now);
    t.same(
      sent.map((n) => [n.type, n.data.period_key]),
      [['budget.threshold_resolved', yesterday]],
    );
  });

  t.test(`${engine}: an admin's resume resolves the pause rules in force`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const records = new BudgetRecords(store);
    const today = currentPeriods();
    await records.fire(`day:${today.day.key}`, '0.5:email');
    await records.fire(`day:${today.day.key}`, '0.9:pause', { period: 'day', periodKey: today.day.key, threshold: 0.9, until: today.day.resetsAt });
    const bus = new EventBus();
    const sent: Notification[] = [];
    bus.on('notify', (n) => sent.push(n));
    await new AlertResolution(store, bus, silent).resumed({ period: 'day', periodKey: today.day.key, threshold: 0.9, until: today.day.resetsAt });
    t.same(
      sent.map((n) => [n.type, n.data.reason]),
      [
        ['budget.resumed', 'admin'],
        ['budget.threshold_resolved', 'admin_resume'],
      ],
    );
    t.equal(sent[1]!.data.action, 'pause', 'only the pause rule');
  });
}
