// GET /v1/usage's date filters: an impossible date is refused, and a range is measured by arithmetic
// before any day of it is listed (0001-01-01..9999-12-31 would otherwise cost a second of CPU).
import t from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { SqliteLedger } from '../../plugins/cost/sqlite-ledger.js';
import { MemoryBudget } from '../../plugins/cost/memory-budget.js';
import * as periods from '../../plugins/cost/periods.js';
import type { RequestContext } from '../../core/context.js';

/** Day lists built, by length: the route under test, with daysBetween watched. */
const listed: number[] = [];
const { usageRoutes } = await t.mockImport<typeof import('../../plugins/cost/usage-route.js')>('../../plugins/cost/usage-route.js', {
  // tsx resolves the module's `./periods.js` to the .ts file: the mock is keyed by that.
  '../../plugins/cost/periods.ts': {
    ...periods,
    daysBetween(from: number, to: number) {
      const days = periods.daysBetween(from, to);
      listed.push(days.length);
      return days;
    },
  },
});

const ledger = new SqliteLedger(mkdtempSync(join(tmpdir(), 'modelgate-usage-route-')), pino({ level: 'silent' }));
t.teardown(() => ledger.close());
const route = usageRoutes(new MemoryBudget(ledger), ledger, { day: 1e9, week: 1e9, month: 1e9 }).find((r) => r.path === '/v1/usage')!;

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

t.test('a range longer than 400 days is refused without listing its days', async (t) => {
  listed.length = 0;
  const refused = await refusal('from=0001-01-01&to=9999-12-31');
  t.equal(refused?.status, 400);
  t.equal(refused?.param, 'from');
  t.match(refused?.message, /at most 400 days/);
  t.same(
    listed.filter((n) => n > 400),
    [],
    'no list of more than 400 days was built',
  );
  t.equal((await refusal('from=2024-01-01&to=2025-02-04'))?.status, 400, '400 days + 1');
  t.equal((await refusal('from=2024-01-01&to=2025-02-03'))?.status, undefined, 'exactly 400 days is allowed');
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
