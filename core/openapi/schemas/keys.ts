// The admin API of keys as plugins/keys/ answers and accepts it: a key's record (never its secret or
// hash), the record with the secret that a create or regenerate shows once, a page of keys, and the
// bodies of a create and a change (bounded as plugins/keys/admin-body.ts checks them).
import type { Schema } from '../types.js';

const dateTime = { type: 'string', format: 'date-time' };
const nullableTime = (description: string) => ({ anyOf: [dateTime, { type: 'null' }], description });
const count = { type: 'integer', minimum: 1, maximum: 1_000_000_000 };
const usd = { type: 'number', minimum: 0, maximum: 1_000_000_000 };

const limits = {
  type: 'object',
  description: "The key's own limits, named as the spec names them; a limit it does not set falls back to the gateway's setting.",
  additionalProperties: false,
  properties: {
    requests_per_minute: { ...count, description: 'Instead of MODELGATE_RATE_LIMIT_RPM.' },
    requests_per_hour: { ...count, description: 'Instead of MODELGATE_RATE_LIMIT_RPH.' },
    tokens_per_minute: { ...count, description: 'Instead of MODELGATE_RATE_LIMIT_TPM.' },
    max_cost_per_request: { ...usd, description: 'USD; instead of MODELGATE_MAX_COST_PER_REQUEST.' },
    daily_cost_limit: { ...usd, description: "USD per UTC day, on top of the gateway's budget." },
    weekly_cost_limit: { ...usd, description: "USD per ISO week, on top of the gateway's budget." },
    monthly_cost_limit: { ...usd, description: "USD per month, on top of the gateway's budget." },
  },
};
const label = (what: string) => ({ type: 'string', minLength: 1, maxLength: 100, description: `${what} 1 to 100 characters, no leading or trailing space.` });
const allowedModels = {
  anyOf: [{ type: 'array', maxItems: 100, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 200 } }, { type: 'null' }],
  description: 'The only models (`gpt-4o`, `openai/gpt-4o`) or providers (`openai/*`) the key may use; null: every model.',
};

const recordProperties = {
  object: { const: 'api_key' },
  id: { type: 'string', pattern: '^key_', description: 'Stable: a regenerate keeps it, and budgets and usage hang on it.' },
  name: { type: 'string' },
  owner: { type: 'string', description: "The tenant: requests of one owner never see another's cache or usage. Defaults to the key's id." },
  prefix: { type: 'string', pattern: '^uc_', description: "The secret's first characters, to tell keys apart." },
  status: { type: 'string', enum: ['active', 'revoked'] },
  admin: { type: 'boolean', description: 'Admin keys may use the admin API.' },
  created_at: dateTime,
  updated_at: dateTime,
  last_used_at: nullableTime('Written at most once a minute per key, so up to a minute (and a few seconds) behind.'),
  expires_at: nullableTime('After it the key is refused with `API key expired`; null: never.'),
  limits: { anyOf: [limits, { type: 'null' }] },
  allowed_models: allowedModels,
};
const recordRequired = Object.keys(recordProperties);

export const keySchemas = {
  ApiKey: { type: 'object', description: 'An API key, without its secret.', required: recordRequired, properties: recordProperties },
  IssuedApiKey: {
    type: 'object',
    description: 'An API key with its secret, shown this once.',
    required: [...recordRequired, 'key'],
    properties: {
      ...recordProperties,
      key: { type: 'string', pattern: '^uc_[A-Za-z0-9_-]{43}$', description: 'The secret (`Authorization: Bearer <key>`). It is stored only as a keyed hash and never shown again.' },
      previous_key_expires_at: nullableTime('Regenerate only: until when the replaced secret still works (MODELGATE_API_KEY_ROTATION_GRACE), then `API key expired`.'),
    },
  },
  ApiKeyList: {
    type: 'object',
    required: ['object', 'data', 'first_id', 'last_id', 'has_more'],
    properties: {
      object: { const: 'list' },
      data: { type: 'array', items: { $ref: '#/components/schemas/ApiKey' } },
      first_id: { type: ['string', 'null'] },
      last_id: { type: ['string', 'null'], description: 'Pass as `after` for the next page.' },
      has_more: { type: 'boolean' },
    },
  },
  ApiKeyCreate: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: {
      name: label('A name for humans.'),
      owner: label("The tenant label; default: the key's own id."),
      admin: { type: 'boolean', default: false },
      limits: { anyOf: [limits, { type: 'null' }] },
      allowed_models: allowedModels,
      expires_at: nullableTime('ISO 8601. With MODELGATE_API_KEY_ROTATION_ENABLED, at most the rotation interval from now (the default).'),
    },
  },
  ApiKeyChange: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      name: label('A name for humans.'),
      owner: label('The tenant label.'),
      limits: { anyOf: [limits, { type: 'null' }], description: 'Replaces the whole object; null removes every limit of the key.' },
      allowed_models: allowedModels,
      expires_at: nullableTime('ISO 8601; null: never (with rotation on, the rotation interval from now).'),
    },
  },
} as const satisfies Record<string, Schema>;
