// GET /v1/analytics/{usage,costs,errors,metrics}: reports over a range of hour or day buckets, read
// from the rollups only (analytics-params.ts says what each query param takes). A non-admin key
// sees its own traffic only (its key_id forced; naming another key is 403 admin_required); an admin
// key sees every key's, or one key's with `key_id`. This replica's queued ledger rows are written
// first, so a client sees its own requests; a database that does not answer is 503 with
// Retry-After.
import { GatewayError } from '../../core/errors.js';
import { sendJson, sendText } from '../../core/respond.js';
import type { RequestContext } from '../../core/context.js';
import type { Route } from '../../core/pipeline.js';
import type { Store } from '../../core/store/database.js';
import { PERIODS, currentPeriods, type PeriodName } from './periods.js';
import { toUsd } from './pricing.js';
import type { Amounts, BudgetStore } from './budget-store.js';
import type { LedgerWriter } from './ledger.js';
import { whoseUsage } from './usage-route.js';
import { parseAnalyticsQuery, type AnalyticsQuery, type ReportName } from './analytics-params.js';
import { COSTS, METRICS, USAGE, rollupReport, type Report } from './analytics-reports.js';
import { errorsReport } from './analytics-errors.js';
import { toCsv } from './analytics-csv.js';

export interface AnalyticsSource {
  store: Pick<Store, 'db'>;
  ledger: Pick<LedgerWriter, 'flush'>;
  budget: Pick<BudgetStore, 'snapshot'>;
  limits: Amounts;
  hourlyRetentionDays: number;
}

/** The report `name` for `query`, read from the rollups (also what bench/analytics.ts times). */
export function runReport(store: Pick<Store, 'db'>, name: ReportName, query: AnalyticsQuery) {
  switch (name) {
    case 'usage':
      return rollupReport(store.db, name, query, USAGE);
    case 'costs':
      return rollupReport(store.db, name, query, COSTS);
    case 'metrics':
      return rollupReport(store.db, name, query, METRICS);
    case 'errors':
      return errorsReport(store.db, query);
  }
}

function csvOf(report: Report): string {
  const groups = report.group_by;
  const measures = Object.keys(report.totals);
  return toCsv(['bucket', ...groups, ...measures], report.series);
}

export function analyticsRoutes(source: AnalyticsSource): Route[] {
  async function budgets(now: number) {
    const periods = currentPeriods(now);
    const snapshot = await source.budget.snapshot(periods).catch((error: unknown) => {
      throw new GatewayError('store_unavailable', { message: 'Budget store unavailable', headers: { 'retry-after': '1' }, cause: error });
    });
    const out = {} as Record<PeriodName, unknown>;
    for (const name of PERIODS) {
      const limit = source.limits[name];
      const spent = snapshot.spent[name];
      out[name] = { period: periods[name].key, limit_usd: toUsd(limit), spent_usd: toUsd(spent), used_ratio: limit > 0 ? spent / limit : 0 };
    }
    return out;
  }

  const route = (name: ReportName): Route => ({
    method: 'GET',
    path: `/v1/analytics/${name}`,
    async handle(ctx: RequestContext) {
      const now = Date.now();
      const query = parseAnalyticsQuery(name, ctx.query, { now, hourlyRetentionDays: source.hourlyRetentionDays });
      query.keyId = whoseUsage(ctx);
      // A database that refuses writes still answers what it holds.
      await source.ledger.flush().catch((error: Error) => ctx.log.warn({ err: error.message }, 'analytics: queued ledger rows could not be written first'));
      const [report, budget] = await Promise.all([
        runReport(source.store, name, query).catch((error: unknown) => {
          throw new GatewayError('store_unavailable', { code: 'analytics_unavailable', message: 'Analytics unavailable: the database does not answer', headers: { 'retry-after': '5' }, cause: error });
        }),
        name === 'costs' ? budgets(now) : undefined,
      ]);
      if (query.format === 'csv') {
        sendText(ctx, 200, csvOf(report as Report), 'text/csv; charset=utf-8', { 'content-disposition': `attachment; filename="modelgate-${name}.csv"` });
        return;
      }
      sendJson(ctx, 200, budget ? { ...report, budgets: budget } : report);
    },
  });
  return (['usage', 'costs', 'errors', 'metrics'] as const).map(route);
}
