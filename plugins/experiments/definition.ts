// What an experiment is, and what the admin API accepts to define one: which traffic enters
// (`match`), how requests are grouped into units (`unit`), the arms (a model, a `provider/model`,
// or a routing strategy, each with a weight), the metrics compared, the primary metric that
// decides and the guardrails that may veto. Bodies are JSON schemas checked by ajv; then the
// cross-field rules (arm names unique, weights not all zero, metrics known) with a 400 naming the field.
import { Ajv } from 'ajv';
import { GatewayError } from '../../core/errors.js';
import { validatedBody } from '../../core/admin-api.js';
import { lazy, lazyValidator } from '../../core/lazy-validator.js';
import { changeSchema, createSchema, type ArmStrategy, type GuardrailMetric } from '../../core/experiment-schema.js';

export { GUARDRAIL_METRICS, STATUSES, STRATEGIES, type ArmStrategy, type GuardrailMetric, type Status } from '../../core/experiment-schema.js';

/** Metrics the gateway measures itself, per request. */
export const AUTOMATIC_METRICS = ['cost', 'latency', 'error_rate'] as const;
/** Feedback metrics with a known scale: user_satisfaction 1–5 (thumbs: 5 and 1), quality_score 0..1. */
export const SCALED_FEEDBACK = { user_satisfaction: { min: 1, max: 5 }, quality_score: { min: 0, max: 1 } } as const;
const HEADER_UNIT = /^header:([!#$%&'*+.^_`|~0-9A-Za-z-]{1,100})$/;

export interface Arm {
  name: string;
  /** A catalog model or alias, or `provider/model`; absent: the requested model. */
  model?: string;
  /** A routing strategy the request is ranked by; absent: the request's own. */
  strategy?: ArmStrategy;
  weight: number;
}

export interface Guardrail {
  metric: GuardrailMetric;
  /** How much worse than control is tolerated, in the metric's unit (a share, ms, USD). */
  tolerance: number;
}

export interface Match {
  /** The model name (or `auto`) as the client sends it; absent: every chat request. */
  model?: string;
  /** Key ids whose requests may enter; absent: every key. */
  keys?: string[];
  /** Share of units that enter, 0 < percent ≤ 100. */
  percent: number;
}

/** Everything an experiment is, besides its state. */
export interface Definition {
  description: string | null;
  match: Match;
  /** `user` (the request's `user` field), `key` (the key id) or `header:<name>`. */
  unit: string;
  arms: Arm[];
  metrics: string[];
  primary_metric: string;
  guardrails: Guardrail[];
  /** Finish as soon as the decision is reached (else only at the end date). */
  early_stop: boolean;
  /** The smallest relative change worth detecting (scales the sequential test; the sample size still needed is for it). */
  min_detectable_effect: number;
  /** 1 − confidence of the decision. */
  alpha: number;
  duration_days: number;
}

export type GuardrailInput = GuardrailMetric | { metric: GuardrailMetric; tolerance?: number };
export interface DefinitionInput {
  name?: string;
  description?: string | null;
  status?: 'draft' | 'running';
  match?: { model?: string; keys?: string[]; percent?: number };
  unit?: string;
  arms?: Array<Omit<Arm, 'weight'> & { weight?: number }>;
  metrics?: string[];
  primary_metric?: string;
  guardrails?: GuardrailInput[];
  early_stop?: boolean;
  min_detectable_effect?: number;
  alpha?: number;
  duration_days?: number;
}

// Compiled on the first request that needs them, not at every start.
const ajv = lazy(() => new Ajv({ allErrors: false, strict: true, allowUnionTypes: true }));
const validateCreate = lazyValidator(() => ajv().compile<DefinitionInput>(createSchema));
const validateChange = lazyValidator(() => ajv().compile<DefinitionInput>(changeSchema));

export function parseCreate(raw: Buffer): DefinitionInput {
  return validatedBody(raw, validateCreate);
}

export function parseChange(raw: Buffer): DefinitionInput {
  return validatedBody(raw, validateChange);
}

/** The gateway-wide defaults a definition falls back to (MODELGATE_AB_TESTING_*). */
export interface Defaults {
  metrics: readonly string[];
  durationDays: number;
  earlyStop: boolean;
}

/** Default guardrails: an arm that fails more often, or is slower at p95, than control does not win. */
const DEFAULT_GUARDRAILS: Guardrail[] = [
  { metric: 'error_rate', tolerance: 0 },
  { metric: 'latency_p95', tolerance: 0 },
];

/**
 * A complete definition from an input (a create, or a change merged over the current one):
 * defaults filled in, then every rule the schema cannot say checked with a 400 naming the field.
 */
export function definitionOf(input: DefinitionInput, defaults: Defaults, current?: Definition): Definition {
  const metrics = input.metrics ?? current?.metrics ?? (defaults.metrics.length > 0 ? [...defaults.metrics] : ['cost']);
  const definition: Definition = {
    description: input.description !== undefined ? input.description : (current?.description ?? null),
    match: input.match ? { ...input.match, percent: input.match.percent ?? 100 } : (current?.match ?? { percent: 100 }),
    unit: input.unit ?? current?.unit ?? 'user',
    arms: input.arms ? input.arms.map((a) => ({ ...a, weight: a.weight ?? 1 })) : (current?.arms ?? []),
    metrics,
    primary_metric: input.primary_metric ?? (input.metrics ? undefined : current?.primary_metric) ?? metrics[0] ?? 'cost',
    guardrails: input.guardrails ? input.guardrails.map(guardrailOf) : (current?.guardrails ?? DEFAULT_GUARDRAILS),
    early_stop: input.early_stop ?? current?.early_stop ?? defaults.earlyStop,
    min_detectable_effect: input.min_detectable_effect ?? current?.min_detectable_effect ?? 0.05,
    alpha: input.alpha ?? current?.alpha ?? 0.05,
    duration_days: input.duration_days ?? current?.duration_days ?? defaults.durationDays,
  };
  check(definition);
  return definition;
}

function guardrailOf(input: GuardrailInput): Guardrail {
  return typeof input === 'string' ? { metric: input, tolerance: 0 } : { metric: input.metric, tolerance: input.tolerance ?? 0 };
}

function check(d: Definition): void {
  const refuse = (param: string, message: string) => {
    throw new GatewayError('bad_request', { param, message });
  };
  if (!d.unit || !(d.unit === 'user' || d.unit === 'key' || HEADER_UNIT.test(d.unit))) refuse('unit', 'unit must be "user", "key" or "header:<name>"');
  const names = new Set<string>();
  d.arms.forEach((a, i) => {
    if (names.has(a.name.toLowerCase())) refuse(`arms.${i}.name`, `arms.${i}.name repeats another arm's name`);
    names.add(a.name.toLowerCase());
    if (a.model === undefined && a.strategy === undefined) refuse(`arms.${i}`, `arms.${i} needs a model or a strategy (or both)`);
  });
  if (d.arms.length < 2) refuse('arms', 'an experiment needs at least two arms');
  if (!d.arms.some((a) => a.weight > 0)) refuse('arms', 'at least one arm needs a weight above 0');
  if (d.arms[0]!.weight === 0) refuse('arms.0.weight', 'the first arm is the control: it needs a weight above 0');
  d.metrics.forEach((metric, i) => {
    if (metric === 'latency' || metric === 'error_rate') refuse(`metrics.${i}`, `${metric} is always measured; list only cost and feedback metrics`);
  });
  const decidable = new Set([...d.metrics, ...AUTOMATIC_METRICS]);
  if (!decidable.has(d.primary_metric)) refuse('primary_metric', 'primary_metric must be one of the metrics, latency or error_rate');
  const seen = new Set<string>();
  d.guardrails.forEach((g, i) => {
    if (seen.has(g.metric)) refuse(`guardrails.${i}`, `guardrails.${i} repeats ${g.metric}`);
    seen.add(g.metric);
  });
}

/** Whether a higher value of the metric is better: costs, latencies and errors are better lower. */
export function higherIsBetter(metric: string): boolean {
  return !(metric === 'cost' || metric === 'latency' || metric === 'error_rate');
}

/** Feedback metrics: those the experiment lists that the gateway does not measure itself. */
export function feedbackMetrics(d: Definition): string[] {
  return d.metrics.filter((m) => !(AUTOMATIC_METRICS as readonly string[]).includes(m));
}

/** The unit's header name when the unit is `header:<name>` (lower case, as Node keys headers). */
export function unitHeader(unit: string): string | undefined {
  const match = HEADER_UNIT.exec(unit);
  return match ? match[1]!.toLowerCase() : undefined;
}
