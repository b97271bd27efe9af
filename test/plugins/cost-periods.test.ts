// Budget periods are UTC calendar days, ISO weeks (numbered by the year of their Thursday) and
// calendar months, each with the instant it resets.
import t from 'tap';
import { currentPeriods, daysBetween, isoWeek } from '../../plugins/cost/periods.js';

const at = (iso: string) => Date.parse(iso);

t.test('ISO weeks start on Monday and belong to the year of their Thursday', async (t) => {
  t.equal(isoWeek(at('2021-01-03T12:00:00Z')).key, '2020-W53', 'a Sunday in January can close the previous year');
  t.equal(isoWeek(at('2024-12-30T00:00:00Z')).key, '2025-W01', 'a Monday in December can open the next year');
  t.equal(isoWeek(at('2025-06-01T23:59:59Z')).key, '2025-W22');
  t.equal(new Date(isoWeek(at('2025-06-01T23:59:59Z')).start).toISOString(), '2025-05-26T00:00:00.000Z');
});

t.test('each period knows its key and when it resets, in UTC', async (t) => {
  const periods = currentPeriods(at('2025-12-31T23:30:00Z'));
  t.same(
    Object.values(periods).map((p) => [p.name, p.key, new Date(p.start).toISOString(), new Date(p.resetsAt).toISOString()]),
    [
      ['day', '2025-12-31', '2025-12-31T00:00:00.000Z', '2026-01-01T00:00:00.000Z'],
      ['week', '2026-W01', '2025-12-29T00:00:00.000Z', '2026-01-05T00:00:00.000Z'],
      ['month', '2025-12', '2025-12-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'],
    ],
  );
  t.same(
    Object.values(periods).map((p) => p.id),
    ['day:2025-12-31', 'week:2026-W01', 'month:2025-12'],
    'the id names the period among those of every name',
  );
});

t.test('a range of days includes both ends', async (t) => {
  t.same(daysBetween(at('2024-02-28T10:00:00Z'), at('2024-03-01T00:00:00Z')), ['2024-02-28', '2024-02-29', '2024-03-01']);
});
