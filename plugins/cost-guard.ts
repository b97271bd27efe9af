// Cost guard: before each upstream attempt, refuses (429 insufficient_quota) what passes
// MODELGATE_MAX_COST_PER_REQUEST or the DAILY/WEEKLY/MONTHLY_COST_LIMIT budgets, spending while paused,
// and unpriced models (403, unless MODELGATE_ALLOW_UNPRICED_MODELS); else reserves the estimate. After
// the response it bills the usage (cost/consumed.ts) and the failed calls that providers bill
// (cost/attempts.ts), releases the rest, writes the ledger rows (cost/ledger.ts, in batches every
// MODELGATE_LEDGER_FLUSH_INTERVAL ms) and evaluates MODELGATE_ALERT_RULES.
import { randomUUID } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { defineSettings, type SettingsOf } from '../core/settings.js';
import { GatewayError } from '../core/errors.js';
import { formatCost, retryAfterSeconds } from '../core/respond.js';
import type { CatalogModel } from '../core/catalog.js';
import type { RequestContext, Target } from '../core/context.js';
import type { PluginModule } from '../core/pipeline.js';
import type { BudgetEvent } from '../core/events.js';
import { PERIODS, PERIOD_LABEL, currentPeriods } from './cost/periods.js';
import { bill, billable, estimate, toNano, toUsd, type UnpricedPolicy } from './cost/pricing.js';
import { perRequestCap } from '../core/estimate.js';
import { consumedUsage } from '../core/consumed.js';
import { ACTIONS, Alerts, parseRules } from './cost/alerts.js';
import { AlertResolution } from './cost/alert-resolution.js';
import { ExceededAlerts } from './cost/exceeded-alerts.js';
import { AlertStates } from '../core/alert-states.js';
import { openBudgetStore } from './cost/open-budget.js';
import { LedgerWriter } from './cost/ledger.js';
import { SpendHistory } from './cost/spend-history.js';
import { BudgetRecords } from './cost/budget-records.js';
import { usageRoutes } from './cost/usage-route.js';
import { analyticsRoutes } from './cost/analytics-routes.js';
import type { Amounts, KeyBudget, Periods, ReserveResult } from './cost/budget-store.js';
import { keyBudget } from './cost/key-budget.js';
import { ledgerRow, requestEnding, scrubbedMessage, type LedgerRow } from './cost/ledger-row.js';
import type { Usage } from '../core/chat-types.js';
import { callsBilledAtEstimate } from './cost/attempts.js';

const settings = defineSettings({
  MODELGATE_DAILY_COST_LIMIT: {
    type: 'number',
    default: 100,
    minimum: 0,
    maximum: 9_000_000,
    variants: ['dev', 'staging', 'prod'],
    envDefaults: { dev: '10', staging: '50', prod: '1000' },
    description: 'USD per UTC day, all keys together. 0 allows no paid request.',
  },
  MODELGATE_WEEKLY_COST_LIMIT: { type: 'number', default: 500, minimum: 0, maximum: 9_000_000, description: 'USD per ISO week (Monday 00:00 UTC to Sunday).' },
  MODELGATE_MONTHLY_COST_LIMIT: { type: 'number', default: 2000, minimum: 0, maximum: 9_000_000, description: 'USD per UTC calendar month.' },
  MODELGATE_ALERTS_ENABLED: { type: 'boolean', default: true, variants: ['staging', 'prod'], description: 'Evaluate MODELGATE_ALERT_RULES as spend moves.' },
  MODELGATE_ALERT_RULES: {
    type: 'array',
    default: ['0.5:email', '0.8:chat', '1.0:pause'],
    items: { type: 'string', pattern: `^\\d+(\\.\\d+)?:(${ACTIONS.join('|')})$` },
    hint: `be threshold:action pairs such as 0.8:chat (actions: ${ACTIONS.join(', ')})`,
    description:
      'Comma-separated threshold:action rules: when spend reaches that fraction of a budget (day, week or month), fire once per period across replicas (budget.threshold_reached, docs/events.md). email, chat and webhook send it to that alert channel (MODELGATE_EMAIL_/CHAT_/WEBHOOK_ALERTS_ENABLED); pause refuses paid requests until the period resets or an admin calls POST /v1/admin/budget/resume. Several rules may share a threshold (0.8:email,0.8:chat).',
  },
  MODELGATE_ALLOW_UNPRICED_MODELS: {
    type: 'boolean',
    default: false,
    description: 'Serve models the catalog has no price for, billed at MODELGATE_UNPRICED_INPUT_PRICE / _OUTPUT_PRICE. Off: they are refused (403), never billed as $0.',
  },
  MODELGATE_UNPRICED_INPUT_PRICE: { type: 'number', default: 10, minimum: 0, description: 'USD per 1M prompt tokens billed for an allowed unpriced model (deliberately high).' },
  MODELGATE_UNPRICED_OUTPUT_PRICE: { type: 'number', default: 30, minimum: 0, description: 'USD per 1M completion tokens billed for an allowed unpriced model.' },
  MODELGATE_LEDGER_FLUSH_INTERVAL: {
    type: 'integer',
    default: 1000,
    minimum: 10,
    maximum: 60_000,
    description:
      'ms between batched writes of ledger rows and usage rollups to the database. A crash loses at most this much of them (the Redis budget keeps counting them); after Redis loses its state, budgets are rebuilt once this much time has passed, so every replica has written its rows.',
  },
  MODELGATE_LEDGER_MAX_BACKLOG: {
    type: 'integer',
    default: 100_000,
    minimum: 100,
    description:
      'Ledger rows a replica may hold unwritten while the database refuses writes (about 1 KB each). Past it, paid requests are refused (503) until the backlog is written: spend is never made that the ledger cannot record.',
  },
});

type CostSettings = SettingsOf<typeof settings>;

/** What one target's reservation holds. */
interface Held {
  id: string;
  /**
   * Further reservations of one estimate each, made before a retry when every call so far may be
   * billed at the estimate (timed out): released when the target settles under `id`.
   */
  extra: string[];
  target: Target;
  /** The target's model, with the prices it is billed at. */
  model: CatalogModel;
  /** USD reserved: the request's estimate on this target. */
  estimateUsd: number;
  /** Failed calls reported before this target's first call: the ones after are its own. */
  failuresFrom: number;
  /** The key whose budgets it is held on (its spend is counted per key). */
  keyId: string;
  /** The key's own budgets (reserved against, and its alert rules evaluated against them). */
  key?: KeyBudget;
}

function refusal(result: Exclude<ReserveResult, { ok: true }>, periods: Periods, limits: Amounts, estimateNano: number, key: KeyBudget | undefined): GatewayError {
  const resetsAt = result.reason === 'paused' ? result.pause.until : periods[result.period].resetsAt;
  const headers = { 'retry-after': retryAfterSeconds(resetsAt - Date.now()), 'x-should-retry': 'false' };
  const when = new Date(resetsAt).toISOString();
  if (result.reason === 'paused') {
    const { period, threshold } = result.pause;
    const label = PERIOD_LABEL[period].toLowerCase();
    return new GatewayError('cost_limit_exceeded', {
      code: 'budget_paused',
      param: `${label}_cost_limit`,
      message: `Spending is paused: the ${label} budget reached ${Math.round(threshold * 10000) / 100}% of its limit. Paused until ${when}, or until an admin resumes it.`,
      headers,
    });
  }
  const label = PERIOD_LABEL[result.period];
  // Whose budget refused: the key's own says so (its limit and spend); the gateway's reads as before.
  const own = result.scope === 'key';
  const limit = own ? key!.limits[result.period]! : limits[result.period];
  return new GatewayError('cost_limit_exceeded', {
    param: `${label.toLowerCase()}_cost_limit`,
    message: `${own ? `This API key's ${label.toLowerCase()}` : label} cost limit of $${formatCost(toUsd(limit))} reached: $${formatCost(toUsd(result.spent))} spent, $${formatCost(toUsd(result.reserved))} reserved by requests in flight, this request needs up to $${formatCost(toUsd(estimateNano))}. It resets at ${when}.`,
    headers,
  });
}

export const costGuard: PluginModule<typeof settings> = {
  name: 'cost-guard',
  settings,
  async create(values, deps) {
    const s = values as CostSettings;
    const { logger, events } = deps;
    const capSetting = values.MODELGATE_MAX_COST_PER_REQUEST;
    // Declared by the router; if it ever moves, fail loudly rather than drop the cap silently.
    if (typeof capSetting !== 'number') throw new Error('cost-guard: MODELGATE_MAX_COST_PER_REQUEST is not declared');
    const operatorCap = capSetting;
    const limits: Amounts = { day: toNano(s.MODELGATE_DAILY_COST_LIMIT), week: toNano(s.MODELGATE_WEEKLY_COST_LIMIT), month: toNano(s.MODELGATE_MONTHLY_COST_LIMIT) };
    const unpriced: UnpricedPolicy = { allowed: s.MODELGATE_ALLOW_UNPRICED_MODELS, input: s.MODELGATE_UNPRICED_INPUT_PRICE / 1e6, output: s.MODELGATE_UNPRICED_OUTPUT_PRICE / 1e6 };

    const store = deps.store();
    const ledger = new LedgerWriter(store, logger, { flushMs: s.MODELGATE_LEDGER_FLUSH_INTERVAL, maxBacklog: s.MODELGATE_LEDGER_MAX_BACKLOG });
    const history = new SpendHistory(store);
    const records = new BudgetRecords(store);
    const { budget, stop: stopBudget } = await openBudgetStore({
      shared: values.MODELGATE_STORE === 'redis',
      store,
      redis: deps.redis,
      logger,
      parts: { ledger, history, records },
      flushMs: s.MODELGATE_LEDGER_FLUSH_INTERVAL,
    });
    // The error messages the analytics keep: the process's one Anonymizer (MODELGATE_ANONYMIZATION_*).
    const anonymizer = deps.anonymizer;
    const hourlyRetentionDays = typeof values.MODELGATE_METRICS_HOURLY_RETENTION === 'number' ? values.MODELGATE_METRICS_HOURLY_RETENTION : 30;
    const alerts = s.MODELGATE_ALERTS_ENABLED ? new Alerts(parseRules(s.MODELGATE_ALERT_RULES), budget, events, logger, records) : undefined;
    // Resolutions and budget.exceeded are sent whether or not rules are evaluated: they are facts, not rules.
    const resolution = new AlertResolution(store, events, logger);
    resolution.start();
    const exceeded = new ExceededAlerts(new AlertStates(store), events, logger);

    const budgetEvents = (spent: Amounts): BudgetEvent[] =>
      PERIODS.map((period) => ({ period, spentUsd: toUsd(spent[period]), limitUsd: toUsd(limits[period]), usedRatio: limits[period] > 0 ? spent[period] / limits[period] : 0 }));
    let last: BudgetEvent[] = [];
    const announce = (spent: Amounts) => {
      last = budgetEvents(spent);
      for (const event of last) events.emit('budget', event);
    };
    // A listener that subscribes after boot (plugins are created in pipeline order) is told where
    // each budget stands at once, instead of waiting for the next settlement.
    (events as EventEmitter).on('newListener', (name: string | symbol, listener: (...args: unknown[]) => void) => {
      if (name === 'budget') queueMicrotask(() => last.forEach((event) => listener(event)));
    });
    // Not awaited: a Redis that lost its state is rebuilt from the ledger first, which waits a flush interval.
    const booted = budget.snapshot(currentPeriods()).then(
      (snapshot) => announce(snapshot.spent),
      (error: Error) => logger.warn({ err: error.message }, 'budget: store unavailable at boot'),
    );

    /** Refuses or reserves the request's estimate on `target`; returns what was reserved. */
    async function reserve(ctx: RequestContext, target: Target): Promise<Held> {
      const model = billable(target.model, unpriced);
      if (!model) {
        throw new GatewayError('model_unpriced', {
          param: 'model',
          message: `The gateway has no price for ${target.provider.name}/${target.model.id}, and unpriced models are not allowed.`,
        });
      }
      if (!ledger.accepting) {
        throw new GatewayError('store_unavailable', {
          code: 'ledger_unavailable',
          message: 'Spend ledger unavailable: the database has not accepted writes for a while',
          headers: { 'retry-after': '5' },
        });
      }
      const usd = estimate(ctx, model);
      // The key's own per-request limit replaces the gateway's; the request may only lower it.
      const keyCap = ctx.principal?.limits?.max_cost_per_request;
      const cap = perRequestCap(ctx.chat!, keyCap ?? operatorCap);
      if (usd > cap) {
        throw new GatewayError('cost_limit_exceeded', {
          code: 'cost_per_request_exceeded',
          param: 'max_cost_per_request',
          message: `This request may cost up to $${formatCost(usd)} on ${target.model.id}, over the ${keyCap === undefined ? '' : "API key's "}per-request cost limit of $${formatCost(cap)}. Lower max_tokens or choose a cheaper model.`,
          headers: { 'x-should-retry': 'false' },
        });
      }
      const key = keyBudget(ctx.principal);
      const id = await hold(ctx, toNano(usd), key);
      return { id, extra: [], target, model, estimateUsd: usd, failuresFrom: ctx.outcome.failedAttempts?.length ?? 0, keyId: ctx.principal!.keyId, key };
    }

    /** Reserves `amount` against every budget, or refuses; returns the reservation's id. */
    async function hold(ctx: RequestContext, amount: number, key: KeyBudget | undefined): Promise<string> {
      const id = randomUUID();
      const periods = currentPeriods();
      let result: ReserveResult;
      try {
        result = await budget.reserve(id, amount, periods, limits, key);
      } catch (error) {
        ctx.log.warn({ err: (error as Error).message }, 'budget: store failed, refusing');
        events.emit('fallback', { component: 'cost-guard', reason: 'redis_unavailable' });
        throw new GatewayError('store_unavailable', { message: 'Budget store unavailable', headers: { 'retry-after': '1' } });
      }
      if (!result.ok) {
        if (result.reason === 'limit') exceeded.refused(result, periods, result.scope === 'key' ? key!.limits[result.period]! : limits[result.period], key?.keyId);
        throw refusal(result, periods, limits, amount, key);
      }
      return id;
    }

    /**
     * Before another call to `held`'s target: each call cut off while the provider worked is billed
     * at the estimate, so once every estimate held is owed, the next call needs one more — or the
     * request ends here, refused, rather than spend past the limit.
     */
    async function holdAnother(ctx: RequestContext, held: Held): Promise<void> {
      if (callsBilledAtEstimate(ctx.outcome.failedAttempts, held.failuresFrom, held.target) < 1 + held.extra.length) return;
      held.extra.push(await hold(ctx, toNano(held.estimateUsd), held.key));
    }

    /** USD owed for the calls to `held`'s target that were cut off while the provider worked (cost/attempts.ts). */
    function cutOffUsd(ctx: RequestContext, held: Held): number {
      return callsBilledAtEstimate(ctx.outcome.failedAttempts, held.failuresFrom, held.target) * held.estimateUsd;
    }

    /**
     * Replaces `held`'s reservation by `nano` and records `rows`, then tells the metrics and the alert
     * rules. The cost is settled first: a release of an extra reservation that fails (kept and
     * retried by the store) never keeps the cost from being counted.
     */
    async function settleBudget(held: Held, nano: number, at: number, rows: LedgerRow[]): Promise<void> {
      const periods = currentPeriods(at);
      const settled = budget.settle(held.id, nano, periods, rows, held.keyId);
      // Almost always none: extra reservations are made only before a retry after a timeout.
      const released = held.extra.length > 0 ? Promise.allSettled(held.extra.map((id) => budget.settle(id, 0, periods))) : undefined;
      const spent = await settled;
      await released;
      announce(spent);
      await alerts?.evaluate(periods, spent, limits);
      if (spent.key && held.key) await alerts?.evaluateKey(held.keyId, periods, spent.key, held.key.limits);
    }

    /**
     * What the request is billed in nano-dollars on `held` (the answer and the cut-off calls), and the
     * usage it consumed. Should billing fail (a usage report no price applies to), it is billed what
     * was reserved for it: never less than it may have cost.
     */
    function billed(ctx: RequestContext, held: Held | undefined, hit: boolean): { nano: number; used: Usage | undefined } {
      try {
        const answered = held ? bill(ctx, held.model) : 0;
        // The cost on the outcome (metrics, logs) is what the answer is billed: also for a model priced
        // by the unpriced default, and for a stream cut short, whose last usage report was partial.
        if (held && answered > 0 && (ctx.outcome.cost === undefined || ctx.outcome.interrupted)) ctx.outcome.cost = answered;
        const nano = toNano(answered + (held ? cutOffUsd(ctx, held) : 0));
        if (!Number.isSafeInteger(nano) || nano < 0) throw new Error(`billed ${nano} nano-dollars`);
        // A cache hit costs nothing, but its tokens were served: usage counts them.
        return { nano, used: hit ? ctx.outcome.usage : consumedUsage(ctx) };
      } catch (error) {
        ctx.log.error({ err: (error as Error).message, requestId: ctx.id }, 'budget: billing failed; billed what was reserved');
        return { nano: held ? toNano(held.estimateUsd * (1 + held.extra.length)) : 0, used: undefined };
      }
    }

    /** A target the request moves on from gave no answer: only its cut-off calls are billed. */
    async function settleAbandoned(ctx: RequestContext, held: Held): Promise<void> {
      const nano = toNano(cutOffUsd(ctx, held));
      const at = Date.now();
      const last = ctx.outcome.failedAttempts.findLast((failure) => failure.target.provider.name === held.target.provider.name && failure.target.model.id === held.target.model.id);
      // Counted in the target's cost, not as a request of its own (the request is counted once).
      const rows = nano > 0 ? [ledgerRow(ctx, at, held.target, { kind: 'failed_call', status: last?.upstreamStatus ?? 0, errorCode: last?.reason ?? null, costNano: nano })] : [];
      await settleBudget(held, nano, at, rows);
    }

    /**
     * The request is over: bills the answer (if any) and the cut-off calls of the last target, and
     * records it in the ledger — also when an earlier target was billed and the next one refused.
     */
    async function settle(ctx: RequestContext, held: Held | undefined, failure: unknown, reservedBefore: boolean): Promise<void> {
      const hit = ctx.outcome.cache === 'HIT';
      if (!held && !hit && !reservedBefore) return;
      const { nano, used } = billed(ctx, held, hit);
      const at = Date.now();
      const ending = requestEnding(ctx, failure);
      const latencyMs = performance.now() - ctx.startedAt;
      const { outcome } = ctx;
      const request = ledgerRow(ctx, at, outcome.target, {
        kind: 'request',
        status: ending.status,
        errorCode: ending.errorCode,
        errorMessage: ending.errorCode === null ? null : scrubbedMessage(ending.message, anonymizer),
        attempts: outcome.attempts,
        retries: outcome.retries,
        fallbacks: outcome.fallbacks,
        overheadMs: Math.max(0, latencyMs - outcome.upstreamMs - outcome.waitedMs),
        openedCircuits: outcome.failedAttempts.filter((call) => call.openedCircuit).map((call) => [call.target.provider.name, call.target.model.id] as const),
        cacheHit: hit,
        promptTokens: used?.prompt_tokens ?? 0,
        completionTokens: used?.completion_tokens ?? 0,
        cachedTokens: used?.prompt_tokens_details?.cached_tokens ?? 0,
        costNano: nano,
        savedNano: hit ? toNano(ctx.outcome.savedUsd ?? 0) : 0,
        latencyMs,
        ttftMs: outcome.ttftMs ?? null,
      });
      if (held) await settleBudget(held, nano, at, [request]);
      else ledger.add([request]);
    }

    return {
      name: 'cost-guard',
      routes: [...usageRoutes(budget, { ledger, history }, limits, (pause) => void resolution.resumed(pause).catch((error: Error) => logger.warn({ err: error.message }, 'budget alerts: the pause rule was not resolved'))), ...analyticsRoutes({ store, ledger, budget, limits, hourlyRetentionDays })],
      step: {
        name: 'cost-guard',
        scope: 'chat',
        async handle(ctx, next) {
          let held: Held | undefined;
          let reservedBefore = false;
          ctx.beforeAttempt.push(async (target) => {
            // The request moves on from the last target, which gave no answer.
            const previous = held;
            held = undefined;
            if (previous) {
              reservedBefore = true;
              await settleAbandoned(ctx, previous).catch((error: Error) => ctx.log.warn({ err: error.message }, 'budget: settlement failed'));
            }
            held = await reserve(ctx, target);
          });
          ctx.beforeRetry.push((target) => (held && held.target === target ? holdAnother(ctx, held) : undefined));
          let failure: unknown;
          try {
            await next();
          } catch (error) {
            failure = error;
            throw error;
          } finally {
            // A Redis store keeps a failed settlement and its rows and retries it; nothing else to do here.
            await settle(ctx, held, failure, reservedBefore).catch((error: Error) => ctx.log.warn({ err: error.message }, 'budget: settlement failed'));
          }
        },
      },
      async close() {
        await booted;
        await resolution.close();
        await exceeded.close();
        await stopBudget();
        // After the budget: settlements it kept hand their rows to the ledger as it closes.
        await ledger.close();
      },
    };
  },
};

