// The key records of the admin API (core/openapi/schemas/keys.ts) and the labels the page gives
// their limits: one table, read by the form, the table's summary and the error messages.

export interface KeyLimits {
  requests_per_minute?: number;
  requests_per_hour?: number;
  tokens_per_minute?: number;
  max_cost_per_request?: number;
  daily_cost_limit?: number;
  weekly_cost_limit?: number;
  monthly_cost_limit?: number;
}
export type LimitName = keyof KeyLimits;

export interface ApiKey {
  object: 'api_key';
  id: string;
  name: string;
  owner: string;
  prefix: string;
  status: 'active' | 'revoked';
  admin: boolean;
  created_at: string;
  updated_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  limits: KeyLimits | null;
  allowed_models: string[] | null;
}

export interface IssuedApiKey extends ApiKey {
  key: string;
  previous_key_expires_at?: string | null;
}

export interface KeyList {
  object: 'list';
  data: ApiKey[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

interface LimitField {
  name: LimitName;
  label: string;
  /** In the table's summary: `60 rpm`, `$5.00/day`. */
  short: string;
  usd: boolean;
}

export const RATE_LIMITS: LimitField[] = [
  { name: 'requests_per_minute', label: 'Requests per minute', short: 'rpm', usd: false },
  { name: 'requests_per_hour', label: 'Requests per hour', short: 'rph', usd: false },
  { name: 'tokens_per_minute', label: 'Tokens per minute', short: 'tpm', usd: false },
];
export const BUDGETS: LimitField[] = [
  { name: 'max_cost_per_request', label: 'Max cost per request (USD)', short: '/request', usd: true },
  { name: 'daily_cost_limit', label: 'Daily cost limit (USD)', short: '/day', usd: true },
  { name: 'weekly_cost_limit', label: 'Weekly cost limit (USD)', short: '/week', usd: true },
  { name: 'monthly_cost_limit', label: 'Monthly cost limit (USD)', short: '/month', usd: true },
];
export const LIMIT_FIELDS = [...RATE_LIMITS, ...BUDGETS];

/** The form's label for a field the API names in `param` (`limits.daily_cost_limit`, `allowed_models.2`). */
export function fieldLabel(param: string): string {
  const [head, rest] = param.split('.', 2) as [string, string?];
  if (head === 'limits' && rest) return LIMIT_FIELDS.find((field) => field.name === rest)?.label ?? param;
  const labels: Record<string, string> = { name: 'Name', owner: 'Owner', allowed_models: 'Allowed models', expires_at: 'Expires', limits: 'Limits' };
  return labels[head] ?? param;
}
