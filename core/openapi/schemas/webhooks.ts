// The admin API of webhook endpoints as plugins/events/ answers and accepts it: an endpoint, a page of
// them, the answer to a delete, a delivery with its attempt log and a page of those, and the bodies
// of a create and a change (bounded as plugins/events/admin-body.ts checks them).
import type { Schema } from '../types.js';

const dateTime = { type: 'string', format: 'date-time' };
const nullable = (schema: Record<string, unknown>, description?: string) => ({ anyOf: [schema, { type: 'null' }], ...(description ? { description } : {}) });
const count = { type: 'integer', minimum: 0 };
const endpointId = { type: 'string', pattern: '^wh_([0-9a-f]{24}|settings)$' };
const deliveryId = { type: 'string', pattern: '^dlv_[0-9a-f]{24}$' };

const url = {
  type: 'string',
  minLength: 1,
  maxLength: 2048,
  description:
    'Where the webhooks go: an http(s) URL. Loopback, private and link-local addresses are refused unless MODELGATE_WEBHOOK_ALLOW_PRIVATE. It may carry a token in its query: answers show the query\'s values as `***`, and the gateway never logs it. The endpoint of MODELGATE_WEBHOOK_URL shows `(MODELGATE_WEBHOOK_URL)`: a setting marked secret is not stored.',
};
const description = nullable({ type: 'string', maxLength: 500 }, 'For humans, up to 500 characters.');
const eventTypes = {
  type: 'array',
  minItems: 1,
  maxItems: 50,
  uniqueItems: true,
  items: { type: 'string', minLength: 1, maxLength: 200 },
  description: 'The event types it takes (e.g. `budget.threshold_reached`), each one the gateway sends; `*` takes every type, those added later included.',
};
const enabled = { type: 'boolean', description: 'Disabled: no delivery is queued for it, and its pending deliveries are skipped.' };

const endpointProperties = {
  id: { ...endpointId, description: '`wh_settings` is the endpoint of MODELGATE_WEBHOOK_URL.' },
  object: { const: 'webhook_endpoint' },
  url,
  description,
  event_types: eventTypes,
  enabled,
  disabled_reason: nullable({ type: 'string' }, 'Why it is disabled: `gone` (the receiver answered 410) or `admin` (disabled through this API); null when enabled.'),
  source: { type: 'string', enum: ['api', 'settings'], description: '`settings`: MODELGATE_WEBHOOK_URL, rewritten at every start; it may only be enabled or disabled here.' },
  created_at: dateTime,
  updated_at: dateTime,
};

const attempt = {
  type: 'object',
  required: ['at', 'ok', 'status_code', 'latency_ms', 'error'],
  properties: {
    at: dateTime,
    ok: { type: 'boolean' },
    status_code: nullable({ type: 'integer' }, "The receiver's HTTP status; null when none arrived."),
    latency_ms: count,
    error: nullable({ type: 'string' }, 'Why it failed, up to 300 characters.'),
  },
};

const deliveryProperties = {
  id: deliveryId,
  object: { const: 'webhook_delivery' },
  event_id: { type: 'string', description: 'The `webhook-id` of every attempt, replays included: receivers deduplicate by it.' },
  event_type: { type: 'string' },
  status: { type: 'string', enum: ['pending', 'delivered', 'failed', 'skipped'], description: '`failed`: the retries ran out; `skipped`: the endpoint was disabled or deleted first.' },
  attempts: count,
  next_attempt_at: nullable(dateTime, 'When it is tried next; null unless pending.'),
  created_at: dateTime,
  delivered_at: nullable(dateTime),
  last_status_code: nullable({ type: 'integer' }),
  last_latency_ms: nullable(count),
  last_error: nullable({ type: 'string' }),
  replay_of: nullable(deliveryId, 'The delivery this one replays.'),
  attempt_log: { type: 'array', maxItems: 20, items: attempt, description: 'Its attempts, oldest first: the latest 20.' },
};

const list = (item: string, description: string) => ({
  type: 'object',
  required: ['object', 'data', 'first_id', 'last_id', 'has_more'],
  properties: {
    object: { const: 'list' },
    data: { type: 'array', items: { $ref: `#/components/schemas/${item}` } },
    first_id: { type: ['string', 'null'] },
    last_id: { type: ['string', 'null'], description },
    has_more: { type: 'boolean' },
  },
});

export const webhookSchemas = {
  WebhookEndpoint: { type: 'object', description: 'Where outbound webhooks go, and which.', required: Object.keys(endpointProperties), properties: endpointProperties },
  WebhookEndpointList: list('WebhookEndpoint', 'Pass as `after` for the next page.'),
  DeletedWebhookEndpoint: {
    type: 'object',
    required: ['id', 'object', 'deleted'],
    properties: { id: endpointId, object: { const: 'webhook_endpoint' }, deleted: { const: true } },
  },
  WebhookDelivery: { type: 'object', description: 'One event sent (or to send) to one endpoint, without its payload.', required: Object.keys(deliveryProperties), properties: deliveryProperties },
  WebhookDeliveryList: list('WebhookDelivery', 'Pass as `after` for the next (older) page.'),
  WebhookEndpointCreate: {
    type: 'object',
    additionalProperties: false,
    required: ['url'],
    properties: { url, description, event_types: { ...eventTypes, default: ['*'] }, enabled: { ...enabled, default: true } },
  },
  WebhookEndpointChange: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    description: 'The fields to change. For `wh_settings`, only `enabled`.',
    properties: { url, description, event_types: eventTypes, enabled },
  },
} as const satisfies Record<string, Schema>;
