// The answers the Overview, Usage and Providers pages read, as core/openapi/schemas/{usage,analytics,gateway}.ts
// describe them (only the fields the pages show).

export type Period = 'day' | 'week' | 'month';

export interface Budget {
  period: string;
  resets_at: string;
  limit_usd: number;
  spent_usd: number;
  reserved_usd: number;
  remaining_usd: number;
  used_ratio: number;
  requests: number;
  errors: number;
  cache_hits: number;
  saved_usd: number;
}

export interface Usage {
  object: 'usage';
  generated_at: string;
  paused: { period: Period; period_key: string; threshold: number; until: string } | null;
  budgets: Record<Period, Budget>;
}

/** A group's fields, whichever group_by named (the API answers `key_id` for `group_by=key`). */
export interface GroupFields {
  provider?: string;
  model?: string;
  key_id?: string;
  status?: number;
  code?: string;
}

export interface CostMeasures {
  requests: number;
  cache_hits: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
  saved_usd: number;
}

interface Report<Totals, Group, Row> {
  start: string;
  end: string;
  bucket: 'hour' | 'day';
  group_by: string[];
  filters: { key_id: string | null; provider: string | null; model: string | null };
  totals: Totals;
  groups: (GroupFields & Group)[];
  groups_truncated: boolean;
  series: (GroupFields & Row & { bucket: string })[];
}

export type CostsReport = Report<CostMeasures, CostMeasures, CostMeasures>;

interface Percentiles {
  mean: number | null;
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

export interface MetricMeasures {
  requests: number;
  error_rate: number;
  cache_hit_ratio: number;
  latency_ms: Percentiles;
  overhead_ms: Percentiles;
  tokens_per_second: number | null;
}
export type MetricsReport = Report<MetricMeasures, MetricMeasures, MetricMeasures>;

export interface ErrorsReport extends Report<{ requests: number; errors: number; error_rate: number }, { errors: number; share: number }, { errors: number }> {
  top_messages: { code: string; message: string; count: number }[];
}

export type Circuit = 'closed' | 'open' | 'half_open' | 'disabled';

export interface ProviderInfo {
  name: string;
  configured: boolean;
  base_url: string;
  circuit: Circuit;
  models: string[];
}

export interface ProviderStatus {
  provider: string;
  state: 'not_configured' | 'down' | 'unknown' | 'degraded' | 'healthy';
  circuit: Circuit;
  success_rate: number | null;
  requests: number;
  latency_ms: { p50: number; p95: number } | null;
  last_error: { message: string; status: number; reason: string; at: string } | null;
  cooldown_until: string | null;
  cooldowns: { model: string; until: string }[];
}

export type ProviderTest =
  | { provider: string; configured: false; ok: false; message: string }
  | { provider: string; configured: true; ok: boolean; status: number; latency_ms: number; error?: string };
