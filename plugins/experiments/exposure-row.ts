// What an exposure records of a finished request, and what counts as the arm's failure. Every
// answer that is not a success counts against the arm that was assigned — 5xx, a provider's 429, a
// model's own 4xx, a request the cost guard refused for the arm's price, a stream the provider
// broke, an answer from another model (failover away from the arm) — except what the key did to
// itself whatever the arm: the gateway's rate limit, and the client leaving (499). Numbers are
// made safe for an integer column (an adapter's odd token count must never fail a batch).
import type { RequestContext } from '../../core/context.js';
import type { Anonymizer } from '../../core/anonymize.js';
import { consumedUsage } from '../../core/consumed.js';
import { newExposureId, type ExposureRow } from './exposures.js';

/** Refusals that say nothing about the arm. */
const NOT_THE_ARMS = new Set(['rate_limit_exceeded']);
const INT_MAX = 2_147_483_647;

const whole = (value: number | undefined, max = INT_MAX) => (value !== undefined && Number.isFinite(value) && value > 0 ? Math.min(Math.round(value), max) : 0);

/** Whether the request counts as a failure of its arm. */
export function failedForArm(ctx: RequestContext, failedOver: boolean): boolean {
  const status = ctx.status ?? 0;
  if (failedOver || ctx.outcome.interrupted === 'upstream_error') return true;
  if (status === 499 || status < 400) return false;
  return !NOT_THE_ARMS.has(ctx.error?.code ?? '');
}

export function exposureRow(ctx: RequestContext, anonymizer: Anonymizer, now = Date.now()): ExposureRow {
  const assignment = ctx.experiment!;
  const outcome = ctx.outcome;
  const first = ctx.candidates?.[0];
  // Answered by another model than the arm's first choice: recorded, and not the arm's success.
  const failedOver = outcome.target !== undefined && first !== undefined && outcome.target.model.id !== first.model.id;
  const usage = consumedUsage(ctx);
  return {
    id: newExposureId(),
    experiment_id: assignment.experimentId,
    arm: assignment.arm,
    request_id: ctx.id,
    key_id: ctx.principal?.keyId ?? '',
    unit: anonymizer.pseudonym(`${assignment.experimentId}\u0000${assignment.unit}`),
    at: now,
    status: whole(ctx.status, 999),
    error: failedForArm(ctx, failedOver) ? 1 : 0,
    failed_over: failedOver ? 1 : 0,
    cache_hit: outcome.cache === 'HIT' ? 1 : 0,
    provider: outcome.target?.provider.name ?? null,
    model: outcome.target?.model.id.slice(0, 200) ?? null,
    // Nano-dollars: at most $9M per request stays an exact integer.
    cost_nano: whole((outcome.cost ?? 0) * 1e9, Number.MAX_SAFE_INTEGER),
    latency_ms: whole(performance.now() - ctx.startedAt),
    prompt_tokens: whole(usage?.prompt_tokens),
    completion_tokens: whole(usage?.completion_tokens),
  };
}
