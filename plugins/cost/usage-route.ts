// GET /v1/usage: each budget period (day, ISO week, month) with its limit, spend, reservations in
// flight, remaining budget, request and token counts and cost per provider/model; with `from`/`to`
// (YYYY-MM-DD, UTC, inclusive) also totals, per model and per key for that range. Counts come from
// the ledger's daily rollups, spend from the budget store. A non-admin key sees only its own counts;
// an admin key sees every key's, or one key's with `key_id` (the gateway's budgets are everyone's
// to see).
// POST /v1/admin/budget/resume (admin keys only; /v1/budget/resume is its older alias) ends a pause
// before its period resets, and says so (budget.resumed).
import { GatewayError } from '../../core/errors.js';
import { sendJson } from '../../core/respond.js';
import type { RequestContext } from '../../core/context.js';
import type { Route } from '../../core/pipeline.js';
import { PERIODS, currentPeriods, dayKey, type PeriodName } from './periods.js';
import { toUsd } from './pricing.js';
import type { Amounts, BudgetStore, PauseState } from './budget-store.js';
import type { LedgerWriter } from './ledger.js';
import type { SpendHistory, UsageRow } from './spend-history.js';

/** Where usage is read from: the rollups, after this replica's queued rows are written (so a client sees its own requests). */
export interface UsageSource {
  ledger: Pick<LedgerWriter, 'flush'>;
  history: Pick<SpendHistory, 'usage'>;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const MAX_RANGE_DAYS = 400;

interface Totals {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  cost_usd: number;
  cache_hits: number;
  saved_usd: number;
  errors: number;
}

function totals(rows: readonly UsageRow[]): Totals {
  const sum = (pick: (row: UsageRow) => number) => rows.reduce((total, row) => total + pick(row), 0);
  return {
    requests: sum((r) => r.requests),
    prompt_tokens: sum((r) => r.promptTokens),
    completion_tokens: sum((r) => r.completionTokens),
    cached_tokens: sum((r) => r.cachedTokens),
    cost_usd: toUsd(sum((r) => r.costNano)),
    cache_hits: sum((r) => r.cacheHits),
    saved_usd: toUsd(sum((r) => r.savedNano)),
    errors: sum((r) => r.errors),
  };
}

function grouped<K extends string>(rows: readonly UsageRow[], by: (row: UsageRow) => Record<K, string>): Array<Record<K, string> & Totals> {
  const groups = new Map<string, { id: Record<K, string>; rows: UsageRow[] }>();
  for (const row of rows) {
    const id = by(row);
    const key = JSON.stringify(id);
    const group = groups.get(key) ?? { id, rows: [] };
    group.rows.push(row);
    groups.set(key, group);
  }
  return [...groups.values()].map((group) => ({ ...group.id, ...totals(group.rows) })).sort((a, b) => b.cost_usd - a.cost_usd);
}

const byModel = (row: UsageRow) => ({ provider: row.provider, model: row.model });
const byKey = (row: UsageRow) => ({ key_id: row.keyId });

const DAY_MS = 86_400_000;

/** Epoch ms of a `YYYY-MM-DD` day, or NaN unless it names a real day (`2025-02-31` does not). */
function dayStart(value: string): number {
  if (!DAY.test(value)) return Number.NaN;
  const ms = Date.parse(`${value}T00:00:00Z`);
  // Date.parse rolls 2025-02-31 over to March 3rd: only a day that reads back the same is real.
  const [year, month, date] = value.split('-').map(Number) as [number, number, number];
  const read = new Date(ms);
  return read.getUTCFullYear() === year && read.getUTCMonth() + 1 === month && read.getUTCDate() === date ? ms : Number.NaN;
}

function day(ctx: RequestContext, name: 'from' | 'to'): string | undefined {
  const value = ctx.query.get(name) ?? undefined;
  if (value !== undefined && Number.isNaN(dayStart(value))) {
    throw new GatewayError('bad_request', { param: name, message: `Invalid value for '${name}': expected a UTC date as YYYY-MM-DD.` });
  }
  return value;
}

const MAX_KEY_ID = 200;

/** The key whose usage is shown: the caller's own, unless an admin asks for all (or one, by `key_id`). */
export function whoseUsage(ctx: RequestContext): string | undefined {
  const asked = ctx.query.get('key_id') ?? undefined;
  // No key id holds a control character (PostgreSQL refuses a NUL outright: a 503, not a 400).
  if (asked !== undefined && (asked === '' || asked.length > MAX_KEY_ID || /[\u0000-\u001f\u007f]/.test(asked))) {
    throw new GatewayError('bad_request', { param: 'key_id', message: `Invalid value for 'key_id': expected a key id of 1 to ${MAX_KEY_ID} characters.` });
  }
  const principal = ctx.principal!;
  if (principal.admin) return asked;
  // A key may name itself; another key's usage is an admin's to see.
  if (asked !== undefined && asked !== principal.keyId) throw new GatewayError('admin_required', { param: 'key_id', message: "Another key's usage needs an admin key" });
  return principal.keyId;
}

export function usageRoutes(budget: BudgetStore, source: UsageSource, limits: Amounts, onResumed: (pause: PauseState) => void = () => undefined): Route[] {
  const query = async (ctx: RequestContext, from: string, to: string, keyId: string | undefined) => {
    // A database that refuses writes still answers what it holds.
    await source.ledger.flush().catch((error: Error) => ctx.log.warn({ err: error.message }, 'usage: queued ledger rows could not be written first'));
    return source.history.usage(from, to, keyId).catch((error: unknown) => {
      // The database is away (requests are still served, their rows wait): say so, not 500.
      throw new GatewayError('store_unavailable', { code: 'usage_unavailable', message: 'Usage unavailable: the database does not answer', headers: { 'retry-after': '5' }, cause: error });
    });
  };
  return [
    {
      method: 'GET',
      path: '/v1/usage',
      async handle(ctx) {
        const from = day(ctx, 'from');
        const to = day(ctx, 'to');
        const now = Date.now();
        const periods = currentPeriods(now);
        const keyId = whoseUsage(ctx);
        const today = dayKey(now);
        const earliest = dayKey(Math.min(periods.week.start, periods.month.start));
        const standing = budget.snapshot(periods).catch((error: unknown) => {
          throw new GatewayError('store_unavailable', { message: 'Budget store unavailable', headers: { 'retry-after': '1' }, cause: error });
        });
        const [snapshot, recent] = await Promise.all([standing, query(ctx, earliest, today, keyId)]);
        const budgets = {} as Record<PeriodName, unknown>;
        for (const name of PERIODS) {
          const period = periods[name];
          const rows = recent.filter((row) => row.day >= dayKey(period.start));
          const spent = snapshot.spent[name];
          budgets[name] = {
            period: period.key,
            starts_at: new Date(period.start).toISOString(),
            resets_at: new Date(period.resetsAt).toISOString(),
            limit_usd: toUsd(limits[name]),
            spent_usd: toUsd(spent),
            reserved_usd: toUsd(snapshot.reserved),
            remaining_usd: toUsd(Math.max(0, limits[name] - spent - snapshot.reserved)),
            used_ratio: limits[name] > 0 ? spent / limits[name] : 0,
            ...totals(rows),
            by_model: grouped(rows, byModel),
          };
        }
        let range: unknown;
        if (from !== undefined || to !== undefined) {
          const end = to ?? today;
          const start = from ?? end;
          if (start > end) throw new GatewayError('bad_request', { param: 'from', message: "Invalid value for 'from': it is after 'to'." });
          // By arithmetic: listing the days of 0001-01-01..9999-12-31 first would cost a second of CPU.
          if ((dayStart(end) - dayStart(start)) / DAY_MS + 1 > MAX_RANGE_DAYS) {
            throw new GatewayError('bad_request', { param: 'from', message: `Invalid value for 'from': a range covers at most ${MAX_RANGE_DAYS} days.` });
          }
          const rows = await query(ctx, start, end, keyId);
          range = { from: start, to: end, ...totals(rows), by_model: grouped(rows, byModel), by_key: grouped(rows, byKey) };
        }
        const pause = snapshot.pause;
        sendJson(ctx, 200, {
          object: 'usage',
          generated_at: new Date(now).toISOString(),
          paused: pause ? { period: pause.period, period_key: pause.periodKey, threshold: pause.threshold, until: new Date(pause.until).toISOString() } : null,
          budgets,
          ...(range ? { range } : {}),
        });
      },
    },
    ...['/v1/budget/resume', '/v1/admin/budget/resume'].map(
      (path): Route => ({
        method: 'POST',
        path,
        async handle(ctx) {
          if (!ctx.principal?.admin) throw new GatewayError('admin_required');
          const pause = (await budget.snapshot(currentPeriods())).pause;
          const resumed = await budget.resume();
          ctx.log.warn({ keyId: ctx.principal.keyId, resumed }, 'budget: spending resumed by an admin');
          if (resumed && pause) onResumed(pause);
          sendJson(ctx, 200, { resumed, paused: null });
        },
      }),
    ),
  ];
}
