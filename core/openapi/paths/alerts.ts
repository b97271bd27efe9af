// The alert settings (plugins/events/alert-settings.ts): admin keys only.
import { headers, RATE_LIMIT_HEADERS } from '../headers.js';
import { keyedErrors, keyedRefusal } from '../responses.js';
import type { PathItem } from '../types.js';

export const alertPaths: Record<string, PathItem> = {
  '/v1/admin/alerts': {
    get: {
      operationId: 'getAlertSettings',
      summary: 'The alert settings',
      description:
        'Whether alerts are on, the cool-down, every alert rule with its numbers, each alert channel and where it sends (never a URL path, query, header or credential), and the latest 50 alert events the outbox holds. Read only: the settings change them. Admin keys only.',
      tags: ['Alerts'],
      parameters: [{ $ref: '#/components/parameters/RequestId' }],
      responses: {
        '200': {
          description: 'The alert settings.',
          headers: headers(...RATE_LIMIT_HEADERS, 'cache-control'),
          content: { 'application/json': { schema: { $ref: '#/components/schemas/AlertSettings' } } },
        },
        ...keyedErrors({
          '403': keyedRefusal('The key is not an admin key (code admin_required), or the IP filter refuses this client (code ip_not_allowed).'),
          '503': keyedRefusal('The database does not answer (code store_unavailable), or the rate-limit store with MODELGATE_RATE_LIMIT_REDIS_FAILURE=refuse.', 'retry-after'),
        }),
      },
    },
  },
};
