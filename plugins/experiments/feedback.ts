// POST /v1/feedback: a client rates an answer it received — `request_id` (the x-request-id the
// answer carried), a `metric` the request's experiment declares, and a `value`. The value belongs
// to the arm the request was assigned, however late it comes (after the experiment ended too).
// A key rates only its own requests: another key's request id is answered 404, exactly as an id
// never seen, so ids cannot be probed. Sending again for the same request and metric replaces the
// value (one vote per answer). Scales: user_satisfaction 1–5 (or thumbs: up = 5, down = 1),
// quality_score 0..1, any other declared metric a finite number.
import { Ajv } from 'ajv';
import { readRequestBody } from '../../core/body.js';
import { GatewayError } from '../../core/errors.js';
import { sendJson } from '../../core/respond.js';
import { validatedBody } from '../../core/admin-api.js';
import { lazyValidator } from '../../core/lazy-validator.js';
import { storeGuarded } from '../../core/store-guard.js';
import type { Route } from '../../core/pipeline.js';
import type { Store } from '../../core/store/database.js';
import { feedbackMetrics, SCALED_FEEDBACK } from './definition.js';
import type { Experiments } from './experiment-store.js';
import type { ExposureWriter } from './exposures.js';

const BODY_LIMIT = 4096;
/** Bound on any other metric's value: a typo of a few orders of magnitude must not swamp a mean. */
const MAX_VALUE = 1e9;
const THUMBS: Record<string, number> = { up: 5, thumbs_up: 5, down: 1, thumbs_down: 1 };

interface FeedbackBody {
  request_id: string;
  metric: string;
  value: number | string | boolean;
}

// Compiled on the first feedback, not at every start.
const validate = lazyValidator(() =>
  new Ajv({ strict: true, allowUnionTypes: true }).compile<FeedbackBody>({
    type: 'object',
    additionalProperties: false,
    required: ['request_id', 'metric', 'value'],
    properties: {
      request_id: { type: 'string', pattern: '^[\\w.:-]{1,128}$' },
      metric: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,63}$' },
      value: { type: ['number', 'string', 'boolean'], maxLength: 20 },
    },
  }),
);

export interface FeedbackDeps {
  store: Store;
  experiments: Experiments;
  exposures: ExposureWriter;
  /** A value was stored for this experiment (its cached results are stale). */
  recorded(experimentId: string): void;
  bodyIdleMs: number;
  now?: () => number;
}

/** The value as stored, or a 400 naming `value`. */
export function feedbackValue(metric: string, value: number | string | boolean): number {
  const refuse = (why: string) => new GatewayError('bad_request', { param: 'value', message: `value ${why}` });
  const scale = SCALED_FEEDBACK[metric as keyof typeof SCALED_FEEDBACK];
  if (metric === 'user_satisfaction' && typeof value !== 'number') {
    const thumbs = typeof value === 'boolean' ? (value ? 5 : 1) : THUMBS[value.toLowerCase()];
    if (thumbs === undefined) throw refuse('of user_satisfaction is a score from 1 to 5, or "up" / "down"');
    return thumbs;
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) throw refuse(`of ${metric} must be a number`);
  if (scale && (value < scale.min || value > scale.max)) throw refuse(`of ${metric} must be between ${scale.min} and ${scale.max}`);
  if (Math.abs(value) > MAX_VALUE) throw refuse(`must be between -${MAX_VALUE} and ${MAX_VALUE}`);
  return value;
}

export function feedbackRoute(deps: FeedbackDeps): Route {
  const now = deps.now ?? Date.now;
  return storeGuarded({
    method: 'POST',
    path: '/v1/feedback',
    async handle(ctx) {
      const input = validatedBody(await readRequestBody(ctx.req, { maxBytes: BODY_LIMIT, idleMs: deps.bodyIdleMs }), validate);
      const found = await deps.exposures.find(input.request_id, ctx.principal!.keyId);
      if (!found) throw new GatewayError('request_not_found', { param: 'request_id' });
      const { exposure } = found;
      const experiment = await deps.experiments.get(exposure.experiment_id);
      // Deleted with its data: the request is no longer in an experiment.
      if (!experiment) throw new GatewayError('request_not_found', { param: 'request_id' });
      const declared = feedbackMetrics(experiment.definition);
      if (!declared.includes(input.metric)) {
        throw new GatewayError('bad_request', { param: 'metric', message: `metric must be one the experiment collects: ${declared.length > 0 ? declared.join(', ') : 'it collects no feedback'}` });
      }
      const value = feedbackValue(input.metric, input.value);
      // The exposure may still be queued: written first (this row alone; the queue writes it again as a no-op), so the feedback never names a row that is not there.
      if (found.queued) await deps.exposures.writeNow(exposure);
      const at = now();
      await deps.store.db
        .insertInto('experiment_feedback')
        .values({ experiment_id: experiment.id, exposure_id: exposure.id, metric: input.metric, arm: exposure.arm, unit: exposure.unit, value, at })
        .onConflict((oc) => oc.columns(['exposure_id', 'metric']).doUpdateSet({ value, at }))
        .execute();
      deps.recorded(experiment.id);
      sendJson(ctx, 200, { object: 'feedback', request_id: input.request_id, metric: input.metric, value, experiment: experiment.name, arm: exposure.arm });
    },
  }, 'feedback');
}
