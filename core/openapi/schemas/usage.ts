// The GET /v1/usage answer as plugins/cost/usage-route.ts writes it: each budget period with its
// limit and spend and the counts behind it, the pause if one is in force, and with from/to the
// totals of that range per model and per key.
import type { Schema } from '../types.js';

const count = { type: 'integer', minimum: 0 };
const usd = { type: 'number', minimum: 0 };
const day = { type: 'string', format: 'date', description: 'A UTC day, YYYY-MM-DD.' };
const dateTime = { type: 'string', format: 'date-time' };

/** Counts and money over a set of requests (usage-route.ts `totals`). */
const totals = {
  requests: count,
  prompt_tokens: count,
  completion_tokens: count,
  cached_tokens: count,
  cost_usd: usd,
  cache_hits: count,
  saved_usd: { ...usd, description: 'What the cache hits would have cost.' },
  errors: count,
};
const totalNames = Object.keys(totals);

const group = (name: string, fields: Record<string, Schema>) => ({
  type: 'array',
  description: `Totals per ${name}, costliest first.`,
  items: { type: 'object', required: [...Object.keys(fields), ...totalNames], properties: { ...fields, ...totals } },
});
const byModel = group('provider and model', { provider: { type: 'string' }, model: { type: 'string' } });

const budget = {
  type: 'object',
  required: ['period', 'starts_at', 'resets_at', 'limit_usd', 'spent_usd', 'reserved_usd', 'remaining_usd', 'used_ratio', ...totalNames, 'by_model'],
  properties: {
    period: { type: 'string', description: 'The period it covers: `2025-01-31`, `2025-W05` (ISO week) or `2025-01`.' },
    starts_at: dateTime,
    resets_at: dateTime,
    limit_usd: usd,
    spent_usd: usd,
    reserved_usd: { ...usd, description: 'Estimates held by requests in flight (on every replica), counted against every period.' },
    remaining_usd: usd,
    used_ratio: { type: 'number', minimum: 0, description: 'spent / limit.' },
    ...totals,
    by_model: byModel,
  },
};

export const usageSchemas = {
  Usage: {
    type: 'object',
    description: "Budgets are the gateway's: every key sees them. Counts are the key's tenant's, or everyone's for an admin key.",
    required: ['object', 'generated_at', 'paused', 'budgets'],
    properties: {
      object: { const: 'usage' },
      generated_at: dateTime,
      paused: {
        description: 'The spending pause an alert rule set, until its period resets or an admin resumes; null when none.',
        anyOf: [
          {
            type: 'object',
            required: ['period', 'period_key', 'threshold', 'until'],
            properties: { period: { type: 'string', enum: ['day', 'week', 'month'] }, period_key: { type: 'string' }, threshold: { type: 'number' }, until: dateTime },
          },
          { type: 'null' },
        ],
      },
      budgets: { type: 'object', required: ['day', 'week', 'month'], properties: { day: budget, week: budget, month: budget } },
      range: {
        type: 'object',
        description: 'Only when `from` or `to` was given.',
        required: ['from', 'to', ...totalNames, 'by_model', 'by_key'],
        properties: { from: day, to: day, ...totals, by_model: byModel, by_key: group('key', { key_id: { type: 'string' } }) },
      },
    },
  },
} as const satisfies Record<string, Schema>;
