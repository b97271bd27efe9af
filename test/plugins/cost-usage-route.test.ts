// GET /v1/usage's date filters: an impossible date is refused, and a range is measured by arithmetic
// before the database is asked for it (a range of 0001-01-01..9999-12-31 is refused unread).
import t from 'tap';
import { pino } from 'pino';
import { usageRoutes, type UsageSource } from '../../plugins/cost/usage-route.js';
import type { RequestContext } from '../../core/context.js';
import { budgetParts, memoryBudget } from '../helpers/budget.js';

const parts = await budgetParts(t);
/** The ranges the route asked the database for: a refused range must never reach it. */
const queried: Array<[string, string]> = [];
const watched: UsageSource = {
  ledger: parts.ledger,
  history: {
    usage: (from, to, tenant) => {
      queried.push([from, to]);
      return parts.history.usage(from, to, tenant);
    },
  },
};
const route = usageRoutes(await memoryBudget(t, parts), watched, { day: 1e9, week: 1e9, month: 1e9 }).find((r) => r.path === '/v1/usage')!;

/** Runs GET /v1/usage?<query> as an admin; resolves with the error it refused with, if any. */
async function refusal(query: string): Promise<{ status?: number; param?: string | null; message?: string } | undefined> {
  const sent: unknown[] = [];
  const res = { writeHead: () => res, setHeader: () => undefined, end: (body: unknown) => sent.push(body), headersSent: false };
  const ctx = { query: new URLSearchParams(query), principal: { keyId: 'bootstrap', tenant: 'default', admin: true }, log: pino({ level: 'silent' }), res, responseHeaders: {}, outcome: {} } as unknown as RequestContext;
  return route.handle(ctx).then(
    () => undefined,
    (error: { status?: number; param?: string | null; message?: string }) => error,
  );
}

t.test('a range longer than 400 days is refused before the store is asked for it', async (t) => {
  queried.length = 0;
  const refused = await refusal('from=0001-01-01&to=9999-12-31');
  t.equal(refused?.status, 400);
  t.equal(refused?.param, 'from');
  t.match(refused?.message, /at most 400 days/);
  t.equal((await refusal('from=2024-01-01&to=2025-02-04'))?.status, 400, '400 days + 1');
  // (The current periods are always queried; the filter's range is a query of its own.)
  const asked = (from: string) => queried.some(([start]) => start === from);
  t.notOk(asked('0001-01-01') || asked('2024-01-01'), 'no refused range reached the store');
  t.equal((await refusal('from=2024-01-01&to=2025-02-03'))?.status, undefined, 'exactly 400 days is allowed');
  t.ok(queried.some(([from, to]) => from === '2024-01-01' && to === '2025-02-03'), 'and is queried');
});

t.test('a date that does not exist is refused, though Date.parse accepts it', async (t) => {
  for (const [query, param] of [
    ['from=2025-02-31&to=2025-03-31', 'from'],
    ['from=2025-04-01&to=2025-04-31', 'to'],
    ['from=2023-02-29&to=2023-03-31', 'from'],
    ['from=2025-13-01&to=2025-12-31', 'from'],
    ['from=2025-1-01&to=2025-12-31', 'from'],
  ] as const) {
    const refused = await refusal(query);
    t.equal(refused?.status, 400, query);
    t.equal(refused?.param, param, query);
  }
  t.equal(await refusal('from=2024-02-29&to=2024-03-01'), undefined, 'a leap day exists');
});
