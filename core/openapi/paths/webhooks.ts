// The admin API of webhook endpoints (plugins/events/admin-routes.ts): admin keys only.
import { headers, RATE_LIMIT_HEADERS } from '../headers.js';
import { keyedErrors, keyedRefusal } from '../responses.js';
import type { Operation, Parameter, PathItem, Response } from '../types.js';

const json = (schema: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } });
const answer = (description: string, schema: string): Response => ({ description, headers: headers(...RATE_LIMIT_HEADERS, 'cache-control'), content: json(schema) });
const id: Parameter = { name: 'id', in: 'path', required: true, description: 'The endpoint id (`wh_…`; `wh_settings` for MODELGATE_WEBHOOK_URL).', schema: { type: 'string' } };
const deliveryId: Parameter = { name: 'delivery_id', in: 'path', required: true, description: 'The delivery id (`dlv_…`).', schema: { type: 'string' } };
const requestId = { $ref: '#/components/parameters/RequestId' };
const query = (name: string, description: string, schema: Record<string, unknown> = { type: 'string' }): Parameter => ({ name, in: 'query', description, schema });
const limit = (what: string) => query('limit', `${what} per page, 1 to 100 (default 20).`, { type: 'integer', minimum: 1, maximum: 100 });

const forbidden = keyedRefusal('The key is not an admin key (code admin_required), or the IP filter refuses this client (code ip_not_allowed).');
const notFound = keyedRefusal('No webhook endpoint has this id (code webhook_not_found, `param` id).');
const badBody = keyedRefusal(
  'The body is not JSON (code invalid_json) or breaks the schema (code invalid_request; `param` names the field, e.g. `event_types.0` for an event type the gateway does not send), or `url` is refused (`param` url; the message says why, e.g. a loopback, private or link-local address without MODELGATE_WEBHOOK_ALLOW_PRIVATE).',
);
const badQuery = keyedRefusal('A query parameter is not valid, or `after` names nothing in this list (code invalid_request, `param` names it).');
const tooLarge = keyedRefusal('The body is larger than 16 KB (code request_too_large).');
const errors = (own: Record<string, Response>) => keyedErrors({ '403': forbidden, '503': keyedRefusal('The database does not answer (code store_unavailable), or the rate-limit store with MODELGATE_RATE_LIMIT_REDIS_FAILURE=refuse.', 'retry-after'), ...own });

const operation = (op: Omit<Operation, 'tags'>): Operation => ({ ...op, tags: ['Webhooks'] });

export const webhookPaths: Record<string, PathItem> = {
  '/v1/admin/webhooks': {
    post: operation({
      operationId: 'createWebhookEndpoint',
      summary: 'Register a webhook endpoint',
      description: 'Registers where webhooks go and which event types; every replica sends to it within seconds. At most 100 endpoints. Admin keys only.',
      parameters: [requestId],
      requestBody: { description: 'The new endpoint.', required: true, content: json('WebhookEndpointCreate') },
      responses: {
        '201': answer('The endpoint.', 'WebhookEndpoint'),
        ...errors({ '400': badBody, '409': keyedRefusal('The gateway already has 100 endpoints (code too_many_webhooks).'), '413': tooLarge }),
      },
    }),
    get: operation({
      operationId: 'listWebhookEndpoints',
      summary: 'List webhook endpoints',
      description: 'Endpoints in the order they were registered, a page at a time: pass the last id of a page as `after` for the next. Admin keys only.',
      parameters: [limit('Endpoints'), query('after', 'The `last_id` of the previous page.', { type: 'string', pattern: '^wh_([0-9a-f]{24}|settings)$' }), requestId],
      responses: { '200': answer('A page of endpoints.', 'WebhookEndpointList'), ...errors({ '400': badQuery }) },
    }),
  },
  '/v1/admin/webhooks/{id}': {
    get: operation({
      operationId: 'getWebhookEndpoint',
      summary: 'One webhook endpoint',
      description: 'An endpoint. Admin keys only.',
      parameters: [id, requestId],
      responses: { '200': answer('The endpoint.', 'WebhookEndpoint'), ...errors({ '404': notFound }) },
    }),
    patch: operation({
      operationId: 'updateWebhookEndpoint',
      summary: 'Change a webhook endpoint',
      description:
        "Changes an endpoint's URL (checked again), description, event types or whether it is enabled. Disabling it skips its pending deliveries. `wh_settings` may only be enabled or disabled: its URL and event types come from the settings. Admin keys only.",
      parameters: [id, requestId],
      requestBody: { description: 'The fields to change.', required: true, content: json('WebhookEndpointChange') },
      responses: {
        '200': answer('The endpoint as changed.', 'WebhookEndpoint'),
        ...errors({ '400': keyedRefusal(`${badBody.description} For \`wh_settings\`, any field but \`enabled\` (\`param\` names it).`), '404': notFound, '413': tooLarge }),
      },
    }),
    delete: operation({
      operationId: 'deleteWebhookEndpoint',
      summary: 'Delete a webhook endpoint',
      description: 'Removes an endpoint; its pending deliveries are skipped, its delivery log stays until retention removes it. `wh_settings` cannot be deleted (unset MODELGATE_WEBHOOK_URL, or disable it). Admin keys only.',
      parameters: [id, requestId],
      responses: {
        '200': answer('The endpoint is gone.', 'DeletedWebhookEndpoint'),
        ...errors({ '400': keyedRefusal('The endpoint is `wh_settings` (code invalid_request, `param` id).'), '404': notFound }),
      },
    }),
  },
  '/v1/admin/webhooks/{id}/deliveries': {
    get: operation({
      operationId: 'listWebhookDeliveries',
      summary: "A webhook endpoint's deliveries",
      description: "The endpoint's deliveries, newest first, each with its latest attempts, a page at a time: pass the last id of a page as `after` for the next. Payloads are not included. Admin keys only.",
      parameters: [
        id,
        limit('Deliveries'),
        query('after', 'The `last_id` of the previous page.', { type: 'string', pattern: '^dlv_[0-9a-f]{24}$' }),
        query('status', 'Only deliveries in this state.', { type: 'string', enum: ['pending', 'delivered', 'failed', 'skipped'] }),
        requestId,
      ],
      responses: { '200': answer('A page of deliveries.', 'WebhookDeliveryList'), ...errors({ '400': badQuery, '404': notFound }) },
    }),
  },
  '/v1/admin/webhooks/{id}/deliveries/{delivery_id}/replay': {
    post: operation({
      operationId: 'replayWebhookDelivery',
      summary: 'Replay a delivery',
      description: 'Sends the delivery\'s event to the endpoint again, as a new delivery due now with the same event id (`webhook-id`), so a receiver that took it already can tell. Admin keys only.',
      parameters: [id, deliveryId, requestId],
      responses: {
        '202': answer('The new delivery, queued.', 'WebhookDelivery'),
        ...errors({
          '404': keyedRefusal('No webhook endpoint has this id (code webhook_not_found), or it has no delivery with this id (code delivery_not_found, `param` delivery_id).'),
          '409': keyedRefusal('The endpoint is disabled (code webhook_disabled): enable it first; or the delivery, or a replay of it, is still pending (code delivery_pending).'),
        }),
      },
    }),
  },
};
