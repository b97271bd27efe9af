// The cost guard's endpoints (plugins/cost/usage-route.ts): usage against the budgets, and the
// admin's way to end a spending pause.
import { headers, RATE_LIMIT_HEADERS } from '../headers.js';
import { keyedErrors, keyedRefusal } from '../responses.js';
import type { PathItem } from '../types.js';

const day = (name: string, description: string) => ({ name, in: 'query' as const, description, schema: { type: 'string', format: 'date' } });

export const usagePaths: Record<string, PathItem> = {
  '/v1/usage': {
    get: {
      operationId: 'getUsage',
      tags: ['Usage'],
      summary: 'Usage and spend against the budgets',
      description:
        'Each budget period (UTC day, ISO week, month) with its limit, spend, reservations in flight and counts per model. With `from`/`to` also the totals of that range, per model and per key. Counts are the calling key\'s own; an admin key sees every key\'s, or one key\'s with `key_id`.',
      parameters: [
        day('from', 'First UTC day of a range, YYYY-MM-DD (default: `to`).'),
        day('to', 'Last UTC day of the range, inclusive (default: today). A range covers at most 400 days.'),
        {
          name: 'key_id',
          in: 'query' as const,
          description: "Only this key's counts. An admin key may name any key; another key only itself (else 403 admin_required).",
          schema: { type: 'string', minLength: 1, maxLength: 200 },
        },
        { $ref: '#/components/parameters/RequestId' },
      ],
      responses: {
        '200': { description: 'The usage.', headers: headers(...RATE_LIMIT_HEADERS), content: { 'application/json': { schema: { $ref: '#/components/schemas/Usage' } } } },
        '400': keyedRefusal('`from` or `to` is not a real UTC day, `from` is after `to`, the range is longer than 400 days, or `key_id` is empty or too long (code invalid_request, `param` names it).'),
        ...keyedErrors({
          '403': keyedRefusal('A non-admin key asked for another key\'s usage (code admin_required, param key_id), or the IP filter refuses this client (code ip_not_allowed).'),
          '503': keyedRefusal(
            'The budget store or the database does not answer (code store_unavailable or usage_unavailable), or the rate-limit store with MODELGATE_RATE_LIMIT_REDIS_FAILURE=refuse.',
            'retry-after',
          ),
        }),
      },
    },
  },
  '/v1/budget/resume': resumeOperation('resumeBudget', 'The older path of POST /v1/admin/budget/resume, kept as an alias.'),
  '/v1/admin/budget/resume': resumeOperation('resumeBudgetAdmin', 'Ends a pause that an alert rule with action `pause` set, before its period resets, and sends budget.resumed (docs/events.md). Admin keys only; no body.'),
};

function resumeOperation(operationId: string, description: string) {
  return {
    post: {
      operationId,
      tags: ['Usage'],
      summary: 'End a spending pause',
      description,
      parameters: [{ $ref: '#/components/parameters/RequestId' }],
      responses: {
        '200': { description: 'Spending is allowed again.', headers: headers(...RATE_LIMIT_HEADERS), content: { 'application/json': { schema: { $ref: '#/components/schemas/BudgetResume' } } } },
        ...keyedErrors({ '403': keyedRefusal('The key is not an admin key (code admin_required), or the IP filter refuses this client (code ip_not_allowed).') }),
      },
    },
  };
}
