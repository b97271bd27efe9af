// Experiments as the admin API answers them (core/openapi/schemas/experiments.ts).

export type ExperimentStatus = 'draft' | 'running' | 'stopped' | 'finished';

export interface Arm {
  name: string;
  model?: string;
  strategy?: string;
  weight: number;
}

export interface Experiment {
  id: string;
  object: 'experiment';
  name: string;
  description: string | null;
  status: ExperimentStatus;
  match: { model?: string; keys?: string[]; percent: number };
  unit: string;
  arms: Arm[];
  control: string;
  metrics: string[];
  primary_metric: string;
  guardrails: { metric: string; tolerance: number }[];
  early_stop: boolean;
  min_detectable_effect: number;
  alpha: number;
  duration_days: number;
  created_by: string;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  ends_at: string | null;
  finished_at: string | null;
  finish_reason: string | null;
  winner: string | null;
  promoted: { arm: string; by: string; at: string } | null;
}

export interface Comparison {
  difference: number;
  relative: number | null;
  ci_low: number;
  ci_high: number;
  verdict: 'better' | 'worse' | 'inconclusive';
}

export interface MetricResult {
  n: number;
  mean: number | null;
  ci_low: number | null;
  ci_high: number | null;
  vs_control?: Comparison | null;
}

export interface ArmResult {
  name: string;
  model: string | null;
  strategy: string | null;
  weight: number;
  requests: number;
  units: number;
  cost_per_request: number | null;
  latency_ms: { p50: number | null; p95: number | null; p50_ci_low: number | null; p50_ci_high: number | null; p95_ci_low: number | null; p95_ci_high: number | null } | null;
  error_rate: number | null;
  failed_over: number;
  cache_hits: number;
  tokens_per_request: { prompt: number | null; completion: number | null };
  metrics: Record<string, MetricResult>;
}

export interface Decision {
  winner: string | null;
  reason: string;
  method: string;
  primary_metric: string;
  confidence: number;
  units_needed: number | null;
  guardrail_breaches: { arm: string; metric: string; detail: string }[];
}

export interface ExperimentWithResults extends Experiment {
  results: { arms: ArmResult[]; decision: Decision; computed_at: string };
}

export interface ExperimentList {
  object: 'list';
  data: Experiment[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export const STATUS_BADGE: Record<ExperimentStatus, string> = { draft: 'muted', running: 'ok', stopped: 'warn', finished: 'muted' };

/** A metric's value as read: USD for cost, ms for latency, a share for error_rate, else the number. */
export function formatMetric(metric: string, value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  if (metric === 'cost') return `${value < 0 ? '−' : ''}$${Math.abs(value).toPrecision(3)}`;
  if (metric === 'latency') return `${Math.round(value)} ms`;
  if (metric === 'error_rate') return `${(value * 100).toFixed(2)}%`;
  return Number.isInteger(value) ? String(value) : value.toFixed(3);
}
