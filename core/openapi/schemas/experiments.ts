// A/B experiments as plugins/experiments/ answers and accepts them: an experiment, a page of them,
// one with its `results` (per arm what it measured, with 95% intervals and the comparison with the
// control arm, then the decision), the answer to a delete; the bodies of a create, a change and a
// promote; and POST /v1/feedback's body and answer. The create and change bodies are the very
// schemas the admin API validates with (core/experiment-schema.ts), with descriptions added.
import { changeSchema, createSchema, GUARDRAIL_METRICS, STATUSES, STRATEGIES } from '../../experiment-schema.js';
import type { Schema } from '../types.js';

const dateTime = { type: 'string', format: 'date-time' };
const nullable = (schema: Record<string, unknown>, description?: string) => ({ anyOf: [schema, { type: 'null' }], ...(description ? { description } : {}) });
const count = { type: 'integer', minimum: 0 };
const number = { type: 'number' };
const experimentId = { type: 'string', pattern: '^exp_[0-9a-f]{24}$' };

/** What each field of a definition means; the bounds are definition.ts's. */
const FIELD_DESCRIPTIONS: Record<keyof typeof createSchema.properties, string> = {
  name: 'Unique among experiments: 1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit. Shown in x-modelgate-experiment.',
  description: 'For humans, up to 500 characters, or null.',
  status: '`draft`: saved, not started (start it later with PATCH `status: running`). Default `running` (refused 409 ab_testing_disabled unless MODELGATE_AB_TESTING_ENABLED).',
  match: 'Which traffic enters: `model` as the client sends it (or `auto`; absent: every chat request), `keys` the key ids whose requests may enter (absent: every key), `percent` of units that enter (default 100).',
  unit: 'What is assigned to an arm, so that its requests all go to one arm: `user` (the request\'s `user` field; requests without one do not enter), `key` (the key id) or `header:<name>`. Default `user`.',
  arms: '2 to 10 arms; the first is the control. Each: a unique `name`, a `model` (a catalog id or alias, or `provider/model`: one the gateway knows) and/or a routing `strategy`, and a `weight` (default 1; the control\'s above 0).',
  metrics: 'Compared per arm: `cost` (measured) and feedback metrics sent to POST /v1/feedback — `user_satisfaction` (1 to 5), `quality_score` (0 to 1) or any other name. `latency` and `error_rate` are always measured and not listed. Default MODELGATE_AB_TESTING_METRICS, else `cost`.',
  primary_metric: 'The metric that decides: one of `metrics`, `latency` or `error_rate`. Default the first metric.',
  guardrails: 'Metrics an arm may not be worse on than the control by more than `tolerance` (a share, ms or USD; default 0) to win: `error_rate`, `latency_p95`, `cost`; a bare name means tolerance 0. Default error_rate and latency_p95.',
  early_stop: 'Finish as soon as the decision names a winner, not only at the end date. Default MODELGATE_AB_TESTING_EARLY_STOP.',
  min_detectable_effect: 'The smallest relative change worth detecting (0.05: 5%): scales the sequential test, and `units_needed` is for it. Default 0.05.',
  alpha: '1 − the confidence of the decision. Default 0.05.',
  duration_days: 'Days it runs once started. Default MODELGATE_AB_TESTING_DURATION.',
};

const described = (schema: typeof createSchema | typeof changeSchema, description: string) => ({
  ...schema,
  description,
  properties: Object.fromEntries(Object.entries(schema.properties).map(([name, field]) => [name, { ...field, description: FIELD_DESCRIPTIONS[name as keyof typeof FIELD_DESCRIPTIONS] }])),
});

const arm = {
  type: 'object',
  required: ['name', 'weight'],
  properties: {
    name: { type: 'string' },
    model: { type: 'string', description: 'The model its requests go to; absent: the requested one.' },
    strategy: { type: 'string', enum: STRATEGIES, description: 'The routing strategy its requests are ranked by; absent: the request\'s own.' },
    weight: { type: 'number', minimum: 0 },
  },
};

const experimentProperties = {
  id: experimentId,
  object: { const: 'experiment' },
  name: { type: 'string' },
  description: nullable({ type: 'string' }),
  status: { type: 'string', enum: STATUSES, description: '`stopped`: by POST …/stop; `finished`: at its end date, its decision (early stop) or a promotion.' },
  match: {
    type: 'object',
    required: ['percent'],
    properties: { model: { type: 'string' }, keys: { type: 'array', items: { type: 'string' } }, percent: { type: 'number', exclusiveMinimum: 0, maximum: 100 } },
  },
  unit: { type: 'string', description: '`user`, `key` or `header:<name>`.' },
  arms: { type: 'array', minItems: 2, items: arm },
  control: { type: 'string', description: 'The first arm\'s name: every other arm is compared with it.' },
  metrics: { type: 'array', items: { type: 'string' } },
  primary_metric: { type: 'string' },
  guardrails: {
    type: 'array',
    items: { type: 'object', required: ['metric', 'tolerance'], properties: { metric: { type: 'string', enum: GUARDRAIL_METRICS }, tolerance: { type: 'number', minimum: 0 } } },
  },
  early_stop: { type: 'boolean' },
  min_detectable_effect: number,
  alpha: number,
  duration_days: number,
  created_by: { type: 'string', description: 'The id of the admin key that created it.' },
  created_at: dateTime,
  updated_at: dateTime,
  started_at: nullable(dateTime, 'Null while a draft.'),
  ends_at: nullable(dateTime, 'When it finishes at the latest; null while a draft.'),
  finished_at: nullable(dateTime),
  finish_reason: nullable({ type: 'string', enum: ['duration', 'decision', 'stopped', 'promoted'] }, 'Why it ended; null until then.'),
  winner: nullable({ type: 'string' }, 'The arm the decision named when it ended (or the promoted arm); null when none.'),
  promoted: nullable(
    {
      type: 'object',
      required: ['arm', 'by', 'at'],
      properties: { arm: { type: 'string' }, by: { type: 'string', description: 'The admin key id that promoted it.' }, at: dateTime },
    },
    'The arm its matching traffic goes to from now on (until the experiment is deleted); null when none.',
  ),
};

const comparison = {
  type: 'object',
  description: 'This arm against the control: the difference of means (arm − control), relative to the control\'s, and the anytime-valid confidence interval of the difference at the decision\'s confidence.',
  required: ['difference', 'relative', 'ci_low', 'ci_high', 'verdict'],
  properties: {
    difference: number,
    relative: nullable(number, 'difference / |the control\'s mean|; null when that mean is 0.'),
    ci_low: number,
    ci_high: number,
    verdict: { type: 'string', enum: ['better', 'worse', 'inconclusive'], description: 'Whether the arm is better or worse than the control on this metric (lower is better for cost, latency and error_rate), at the decision\'s confidence.' },
  },
};

const metric = (vsControl: boolean) => ({
  type: 'object',
  required: ['n', 'mean', 'ci_low', 'ci_high', ...(vsControl ? ['vs_control'] : [])],
  properties: {
    n: { ...count, description: 'Observations: requests, or feedback values for a feedback metric.' },
    mean: nullable(number, 'Per observation (cost in USD, latency in ms, error_rate a share); null without any.'),
    ci_low: nullable(number, 'The 95% interval of the mean; null below two units.'),
    ci_high: nullable(number),
    ...(vsControl ? { vs_control: nullable(comparison, 'Null until both arms have two units with values.') } : {}),
  },
});

const armResults = {
  type: 'object',
  required: ['name', 'model', 'strategy', 'weight', 'requests', 'units', 'cost_per_request', 'latency_ms', 'error_rate', 'failed_over', 'cache_hits', 'tokens_per_request', 'metrics'],
  properties: {
    name: { type: 'string' },
    model: nullable({ type: 'string' }),
    strategy: nullable({ type: 'string', enum: STRATEGIES }),
    weight: { type: 'number', minimum: 0 },
    requests: count,
    units: { ...count, description: 'Distinct units (users, keys, header values) among its requests.' },
    cost_per_request: nullable(number, 'USD; null without requests.'),
    latency_ms: {
      type: 'object',
      description: 'Median and 95th percentile latency with their distribution-free 95% intervals; null without requests.',
      required: ['p50', 'p95', 'p50_ci_low', 'p50_ci_high', 'p95_ci_low', 'p95_ci_high'],
      properties: Object.fromEntries(['p50', 'p95', 'p50_ci_low', 'p50_ci_high', 'p95_ci_low', 'p95_ci_high'].map((name) => [name, nullable(number)])),
    },
    error_rate: nullable(number, 'Share of its requests that were not a success (any error answer but the gateway\'s own rate limit, a broken stream, or an answer from another model than its own); null without requests.'),
    failed_over: { ...count, description: 'Requests answered by another model than the arm\'s first choice.' },
    cache_hits: count,
    tokens_per_request: {
      type: 'object',
      required: ['prompt', 'completion'],
      properties: { prompt: nullable(number), completion: nullable(number) },
    },
    metrics: {
      type: 'object',
      description: 'By metric: `cost`, `latency`, `error_rate` and each feedback metric. The control arm\'s have no `vs_control`.',
      additionalProperties: { anyOf: [metric(true), metric(false)] },
    },
  },
};

const decision = {
  type: 'object',
  description: 'Which arm wins, if the evidence says so yet: an arm better than the control on the primary metric that breaches no guardrail, or the control when every other arm is worse.',
  required: ['winner', 'reason', 'method', 'primary_metric', 'confidence', 'units_needed', 'guardrail_breaches'],
  properties: {
    winner: nullable({ type: 'string' }, 'The winning arm; null while undecided.'),
    reason: { type: 'string', description: 'Why, in words.' },
    method: { const: 'msprt', description: 'A mixture sequential probability ratio test: valid however often the results are read.' },
    primary_metric: { type: 'string' },
    confidence: { type: 'number', description: '1 − alpha.' },
    units_needed: nullable(count, 'More units per arm an effect of `min_detectable_effect` still needs: 0 when decided, null when unknown yet.'),
    guardrail_breaches: {
      type: 'array',
      items: { type: 'object', required: ['arm', 'metric', 'detail'], properties: { arm: { type: 'string' }, metric: { type: 'string', enum: GUARDRAIL_METRICS }, detail: { type: 'string' } } },
    },
  },
};

const results = {
  type: 'object',
  description: 'What the experiment measured so far, read when asked.',
  required: ['arms', 'decision', 'computed_at'],
  properties: {
    arms: { type: 'array', items: armResults, description: 'In the order of the definition: the control first.' },
    decision,
    computed_at: dateTime,
  },
};

export const experimentSchemas = {
  Experiment: { type: 'object', description: 'An A/B experiment: its definition and state.', required: Object.keys(experimentProperties), properties: experimentProperties },
  ExperimentWithResults: {
    type: 'object',
    description: 'An experiment with its results and decision.',
    required: [...Object.keys(experimentProperties), 'results'],
    properties: { ...experimentProperties, results },
  },
  ExperimentList: {
    type: 'object',
    required: ['object', 'data', 'first_id', 'last_id', 'has_more'],
    properties: {
      object: { const: 'list' },
      data: { type: 'array', items: { $ref: '#/components/schemas/Experiment' } },
      first_id: { type: ['string', 'null'] },
      last_id: { type: ['string', 'null'], description: 'Pass as `after` for the next page.' },
      has_more: { type: 'boolean' },
    },
  },
  DeletedExperiment: {
    type: 'object',
    required: ['id', 'object', 'deleted'],
    properties: { id: experimentId, object: { const: 'experiment' }, deleted: { const: true } },
  },
  ExperimentCreate: described(createSchema, 'A new experiment. Fields not given take the defaults named.'),
  ExperimentChange: described(
    changeSchema,
    'The fields to change. A draft: any field, and `status: running` starts it. A running experiment: only `description`, `early_stop` and `duration_days` (counted from its start).',
  ),
  ExperimentPromote: {
    type: 'object',
    additionalProperties: false,
    properties: { arm: { type: 'string', minLength: 1, maxLength: 64, description: 'The arm to promote; absent: the winner of the decision.' } },
  },
  FeedbackCreate: {
    type: 'object',
    additionalProperties: false,
    required: ['request_id', 'metric', 'value'],
    properties: {
      request_id: { type: 'string', pattern: '^[\\w.:-]{1,128}$', description: 'The x-request-id of the answer rated: a request of this key that entered an experiment.' },
      metric: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,63}$', description: 'A feedback metric the experiment collects (one of its `metrics` other than cost).' },
      value: {
        type: ['number', 'string', 'boolean'],
        maxLength: 20,
        description: '`user_satisfaction`: 1 to 5, or `up` / `thumbs_up` / true (5) and `down` / `thumbs_down` / false (1); `quality_score`: 0 to 1; any other metric: a number from -1e9 to 1e9.',
      },
    },
  },
  Feedback: {
    type: 'object',
    description: 'The value as stored, and where it counts. Sending again for the same request and metric replaces it.',
    required: ['object', 'request_id', 'metric', 'value', 'experiment', 'arm'],
    properties: {
      object: { const: 'feedback' },
      request_id: { type: 'string' },
      metric: { type: 'string' },
      value: { type: 'number', description: 'As a number: thumbs become 5 or 1.' },
      experiment: { type: 'string', description: 'The experiment\'s name.' },
      arm: { type: 'string', description: 'The arm the request was assigned.' },
    },
  },
} as const satisfies Record<string, Schema>;
