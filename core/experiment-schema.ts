// The contract of the experiments admin API's bodies, as JSON schemas: what plugins/experiments/
// validates with (ajv) and what the OpenAPI description publishes — one definition for both.
// Cross-field rules (unique arm names, known models, …) are the plugin's (definition.ts).

export const STATUSES = ['draft', 'running', 'stopped', 'finished'] as const;
export type Status = (typeof STATUSES)[number];
export const STRATEGIES = ['cost_optimized', 'quality_optimized', 'performance_optimized'] as const;
export type ArmStrategy = (typeof STRATEGIES)[number];

/** Guardrails: the arm may not be worse than control on these by more than their tolerance. */
export const GUARDRAIL_METRICS = ['error_rate', 'latency_p95', 'cost'] as const;
export type GuardrailMetric = (typeof GUARDRAIL_METRICS)[number];

export const MAX_ARMS = 10;
export const MAX_METRICS = 10;
export const MAX_KEYS = 100;
export const NAME = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';
export const METRIC = '^[a-z][a-z0-9_]{0,63}$';

const arm = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', pattern: NAME },
    model: { type: 'string', minLength: 1, maxLength: 200 },
    strategy: { type: 'string', enum: STRATEGIES },
    weight: { type: 'number', minimum: 0, maximum: 1_000_000 },
  },
} as const;

const guardrail = {
  anyOf: [
    { type: 'string', enum: GUARDRAIL_METRICS },
    {
      type: 'object',
      additionalProperties: false,
      required: ['metric'],
      properties: { metric: { type: 'string', enum: GUARDRAIL_METRICS }, tolerance: { type: 'number', minimum: 0, maximum: 1e9 } },
    },
  ],
} as const;

const fields = {
  name: { type: 'string', pattern: NAME },
  description: { anyOf: [{ type: 'string', maxLength: 500 }, { type: 'null' }] },
  status: { type: 'string', enum: ['draft', 'running'] },
  match: {
    type: 'object',
    additionalProperties: false,
    properties: {
      model: { type: 'string', minLength: 1, maxLength: 200 },
      keys: { type: 'array', minItems: 1, maxItems: MAX_KEYS, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 100 } },
      percent: { type: 'number', exclusiveMinimum: 0, maximum: 100 },
    },
  },
  unit: { type: 'string', minLength: 1, maxLength: 120 },
  arms: { type: 'array', minItems: 2, maxItems: MAX_ARMS, items: arm },
  metrics: { type: 'array', maxItems: MAX_METRICS, uniqueItems: true, items: { type: 'string', pattern: METRIC } },
  primary_metric: { type: 'string', pattern: METRIC },
  guardrails: { type: 'array', maxItems: GUARDRAIL_METRICS.length, items: guardrail },
  early_stop: { type: 'boolean' },
  min_detectable_effect: { type: 'number', exclusiveMinimum: 0, maximum: 10 },
  alpha: { type: 'number', minimum: 0.001, maximum: 0.2 },
  duration_days: { type: 'number', exclusiveMinimum: 0, maximum: 365 },
} as const;

export const createSchema = { type: 'object', additionalProperties: false, required: ['name', 'arms'], properties: fields } as const;
export const changeSchema = { type: 'object', additionalProperties: false, minProperties: 1, properties: fields } as const;

