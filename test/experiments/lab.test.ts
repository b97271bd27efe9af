// The experiment lifecycle against a real store: a promotion read before a stop does not rewrite
// the stop (nor announce twice); a stop never waits on results that cannot be read; end dates
// apply with A/B testing off; a deleted experiment's late exposures are removed.
import t from 'tap';
import { pino } from 'pino';
import { Lab } from '../../plugins/experiments/lab.js';
import { ENGINES, openTestStore } from '../helpers/database.js';
import type { Notification } from '../../core/events.js';

const silent = pino({ level: 'silent' });
const resolveModel = (name: string) => [{ provider: 'openai', id: name, aliases: [] }];
const defaults = { metrics: [], durationDays: 7, earlyStop: false };
const body = { name: 'e1', arms: [{ name: 'a', model: 'x' }, { name: 'b', model: 'y' }] };
const finished = (events: Notification[]) => events.filter((e) => e.type === 'experiment.finished');

for (const engine of ENGINES) {
  t.test(`a promotion read before a stop adds the promotion and keeps the stop (${engine})`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const events: Notification[] = [];
    const lab = new Lab({ store, logger: silent, enabled: true, defaults, resolveModel, notify: (n) => events.push(n) });
    const created = await lab.create({ ...body }, 'admin');
    const stale = (await lab.experiments.get(created.id))!;
    await lab.stop(stale);
    const promoted = await lab.promote(stale, 'b', 'admin2');
    t.match(promoted, { status: 'stopped', finishReason: 'stopped', promotedArm: 'b', promotedBy: 'admin2' });
    t.equal(finished(events).length, 1, 'experiment.finished once, for the stop');
    t.match(finished(events)[0]!.data, { reason: 'stopped' });
    await t.rejects(lab.promote(stale, 'a', 'admin3'), { code: 'already_promoted' });
  });
}

t.test('a stop does not wait on results: when they cannot be read, it stops without a winner', async (t) => {
  const store = await openTestStore(t, 'sqlite', { migrated: true });
  const events: Notification[] = [];
  const lab = new Lab({ store, logger: silent, enabled: true, defaults, resolveModel, notify: (n) => events.push(n) });
  const created = await lab.create({ ...body, name: 'e3', metrics: ['quality_score'] }, 'admin');
  // Stands for a read that fails (a statement timeout on a huge experiment).
  await store.db.schema.alterTable('experiment_feedback').renameTo('feedback_gone').execute();
  const stopped = await lab.stop((await lab.experiments.get(created.id))!);
  t.match(stopped, { status: 'stopped', winner: null });
  t.match(finished(events)[0]!.data, { reason: 'stopped', winner: null });
  t.equal(lab.live.length, 0, 'no longer assigned');
});

t.test('with A/B testing off, a running experiment still ends at its end date', async (t) => {
  const store = await openTestStore(t, 'sqlite', { migrated: true });
  let now = Date.now();
  const on = new Lab({ store, logger: silent, enabled: true, defaults, resolveModel, notify: () => {}, now: () => now });
  const created = await on.create({ ...body, duration_days: 1 }, 'admin');
  now += 2 * 86_400_000;
  const events: Notification[] = [];
  const off = new Lab({ store, logger: silent, enabled: false, defaults, resolveModel, notify: (n) => events.push(n), now: () => now });
  await off.refresh();
  t.equal(off.live.length, 0, 'nothing assigned');
  t.ok(off.anyRunning, 'but the finisher knows something runs');
  await off.finish({ decisions: false });
  t.match(await off.experiments.get(created.id), { status: 'finished', finishReason: 'duration' });
  t.equal(finished(events).length, 1);
});

t.test('exposures of a deleted experiment written late by another replica are removed', async (t) => {
  const store = await openTestStore(t, 'sqlite', { migrated: true });
  const lab = new Lab({ store, logger: silent, enabled: true, defaults, resolveModel, notify: () => {} });
  const created = await lab.create({ ...body, name: 'gone' }, 'admin');
  await lab.stop(created);
  await lab.remove((await lab.experiments.get(created.id))!);
  await store.db.insertInto('experiment_exposures').values({ id: 'xp_late', experiment_id: created.id, arm: 'a', request_id: 'r', key_id: 'k', unit: 'u', at: 1, status: 200, error: 0, failed_over: 0, cache_hit: 0, provider: null, model: null, cost_nano: 0, latency_ms: 1, prompt_tokens: 0, completion_tokens: 0 }).execute();
  await lab.experiments.removeData(created.id);
  t.equal((await store.db.selectFrom('experiment_exposures').selectAll().execute()).length, 0);
});
