// The exposure writer: one row the database refuses (an adapter's fractional or huge token count
// reaching an integer column, a NaN cost) is dropped, not retried for ever ahead of every later row;
// a database that does not answer keeps the whole queue; a row written early (feedback) is not
// written twice; and a request id reused by another key does not hide the owner's request.
import t from 'tap';
import { pino } from 'pino';
import { ExposureWriter, newExposureId, type ExposureRow } from '../../plugins/experiments/exposures.js';
import { ENGINES, openTestStore } from '../helpers/database.js';

const silent = pino({ level: 'silent' });

function row(extra: Partial<ExposureRow> = {}): ExposureRow {
  return {
    id: newExposureId(), experiment_id: 'exp_1', arm: 'a', request_id: `r_${Math.random()}`, key_id: 'k1', unit: 'anon_x', at: Date.now(),
    status: 200, error: 0, failed_over: 0, cache_hit: 0, provider: 'openai', model: 'm', cost_nano: 10, latency_ms: 5, prompt_tokens: 1, completion_tokens: 1, ...extra,
  };
}

for (const engine of ENGINES) {
  t.test(`a row the database refuses is dropped, the rest written (${engine})`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const writer = new ExposureWriter(store, silent, 60_000);
    t.teardown(() => writer.close());
    // PostgreSQL refuses the fraction and the overflow; SQLite refuses neither, both refuse NULL (NaN).
    writer.add(row({ prompt_tokens: 12.5, completion_tokens: 3e9 }));
    writer.add(row({ cost_nano: Number.NaN }));
    writer.add(row({ request_id: 'good-one' }));
    await writer.flush();
    t.ok(await writer.find('good-one', 'k1'), 'the good row is written');
    t.equal(writer.backlog, 0, 'nothing stays queued');
    const early = row({ request_id: 'rated' });
    writer.add(early);
    await writer.writeNow(early);
    await writer.flush();
    t.equal((await store.db.selectFrom('experiment_exposures').selectAll().where('request_id', '=', 'rated').execute()).length, 1, 'a row written early is not written twice');
  });
}

t.test('a database that does not answer keeps the queue', async (t) => {
  const store = await openTestStore(t, 'postgres', { migrated: true });
  const writer = new ExposureWriter(store, silent, 60_000);
  writer.add(row());
  writer.add(row());
  await store.close();
  await t.rejects(writer.flush(), 'the batch fails');
  t.equal(writer.backlog, 2, 'and stays queued: nothing is dropped for the database\'s sake');
});

t.test('another key reusing a request id cannot hide the owner\'s request', async (t) => {
  const store = await openTestStore(t, 'sqlite', { migrated: true });
  const writer = new ExposureWriter(store, silent, 60_000);
  t.teardown(() => writer.close());
  writer.add(row({ request_id: 'chosen-id', key_id: 'owner', at: 1000 }));
  for (let i = 0; i < 60; i++) writer.add(row({ request_id: 'chosen-id', key_id: 'squatter', at: 2000 + i }));
  t.equal((await writer.find('chosen-id', 'owner'))?.queued, true, 'found while queued');
  await writer.flush();
  t.match(await writer.find('chosen-id', 'owner'), { queued: false, exposure: { key_id: 'owner' } });
});
