// What the admin API accepts, as JSON schemas checked by ajv: the body of a create and of a change,
// and the list's query. Everything is bounded (lengths, list sizes, values); a refusal names the
// field (`param`), as OpenAI's 400s do.
import { Ajv } from 'ajv';
import { GatewayError } from '../../core/errors.js';
import type { KeyLimits } from '../../core/context.js';
import { validatedBody } from '../../core/admin-api.js';
import { lazy, lazyValidator } from '../../core/lazy-validator.js';

export const MAX_NAME = 100;
export const MAX_ALLOWED_MODELS = 100;
const MAX_MODEL_NAME = 200;
const MAX_COUNT = 1_000_000_000;
const MAX_USD = 1_000_000_000;

const count = { type: 'integer', minimum: 1, maximum: MAX_COUNT };
const usd = { type: 'number', minimum: 0, maximum: MAX_USD };
export const limitsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    requests_per_minute: count,
    requests_per_hour: count,
    tokens_per_minute: count,
    max_cost_per_request: usd,
    daily_cost_limit: usd,
    weekly_cost_limit: usd,
    monthly_cost_limit: usd,
  },
} as const;
const label = { type: 'string', minLength: 1, maxLength: MAX_NAME, pattern: '^\\S(.*\\S)?$' };
const ISO_8601 = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$';
export const keyFields = {
  name: label,
  owner: label,
  limits: { anyOf: [limitsSchema, { type: 'null' }] },
  allowed_models: {
    anyOf: [{ type: 'array', maxItems: MAX_ALLOWED_MODELS, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: MAX_MODEL_NAME, pattern: '^\\S+$' } }, { type: 'null' }],
  },
  expires_at: { anyOf: [{ type: 'string', pattern: ISO_8601 }, { type: 'null' }] },
} as const;

export interface KeyFieldsBody {
  name?: string;
  owner?: string;
  limits?: KeyLimits | null;
  allowed_models?: string[] | null;
  expires_at?: string | null;
}
export interface CreateBody extends KeyFieldsBody {
  name: string;
  admin?: boolean;
}

export const createSchema = { type: 'object', additionalProperties: false, required: ['name'], properties: { ...keyFields, admin: { type: 'boolean' } } } as const;
export const changeSchema = { type: 'object', additionalProperties: false, minProperties: 1, properties: keyFields } as const;

// Compiled on the first request that needs them, not at every start.
const ajv = lazy(() => new Ajv({ allErrors: false, strict: true, allowUnionTypes: true }));
const validateCreate = lazyValidator(() => ajv().compile<CreateBody>(createSchema));
const validateChange = lazyValidator(() => ajv().compile<KeyFieldsBody>(changeSchema));


/** Epoch ms of an ISO 8601 time, or a 400 naming expires_at. */
export function parseTime(value: string | null | undefined): number | null | undefined {
  if (value === undefined || value === null) return value;
  const ms = Date.parse(value);
  // Date.parse rolls 2026-02-31 over into March: only a day that reads back the same is real.
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  const real = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  if (!Number.isFinite(ms) || !real) throw new GatewayError('bad_request', { param: 'expires_at', message: 'expires_at is not a real time (ISO 8601, e.g. 2026-12-31T00:00:00Z)' });
  return ms;
}

export function parseBody<T>(raw: Buffer, kind: 'create' | 'change'): T {
  return validatedBody(raw, kind === 'create' ? validateCreate : validateChange) as T;
}
