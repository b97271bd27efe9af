// Review: on SQLite a report ranking groups over a long range is read a week at a time, letting other
// work run between the weeks (one statement over a month of 1,000 keys × 20 models held the event loop
// half a second). The ranking, sums, ties and `truncated` are those of the one statement PostgreSQL runs.
import t from 'tap';
import { openTestStore } from '../helpers/database.js';
import { readGroups } from '../../plugins/cost/analytics-store.js';
import type { AnalyticsQuery } from '../../plugins/cost/analytics-params.js';

const DAY = 86_400_000;
const START = Date.UTC(2026, 10, 1);

t.test('sqlite and postgres rank the same groups over three weeks', async (t) => {
  const answers: unknown[] = [];
  for (const engine of ['sqlite', 'postgres'] as const) {
    const store = await openTestStore(t, engine, { migrated: true });
    const rows = [];
    for (let day = 0; day < 21; day++) {
      for (let key = 0; key < 20; key++) {
        for (const model of ['m-a', 'm-b', 'm-c']) {
          // Costs that tie across groups now and then, and keys that come and go.
          if ((key + day) % 4 === 0) continue;
          rows.push({ bucket: START + day * DAY, tenant: 't', key_id: `key_${String(key).padStart(2, '0')}`, provider: 'p', model, status: 200, requests: 1 + day, cost_nano: ((key * 7 + day) % 11) * 1000 });
        }
      }
    }
    for (let i = 0; i < rows.length; i += 200) await store.db.insertInto('usage_daily').values(rows.slice(i, i + 200) as never).execute();
    const query = { start: START, end: START + 21 * DAY, bucket: 'day', groupBy: ['key', 'model'], limit: 25 } as unknown as AnalyticsQuery;
    let turns = 0;
    const timer = setInterval(() => turns++, 0);
    const answer = await readGroups(store.db, query, { table: 'usage_daily', columns: ['cost_nano', 'requests'], groupBy: ['key', 'model'], orderBy: 'cost_nano' }, 25);
    clearInterval(timer);
    if (engine === 'sqlite') t.ok(turns > 0, `other work ran between the weeks (${turns} timer turns)`);
    t.equal(answer.groups.length, 25);
    t.equal(answer.truncated, true);
    answers.push(answer);
  }
  t.same(answers[0], answers[1], 'the same ranking, sums and ties on both engines');
});
