// The admin API of webhook endpoints (admin keys only; anything else is refused 403 admin_required):
//   POST   /v1/admin/webhooks                                   register; 201 with the endpoint
//   GET    /v1/admin/webhooks                                   list: limit, after (cursor)
//   GET    /v1/admin/webhooks/{id}                              one endpoint
//   PATCH  /v1/admin/webhooks/{id}                              change url, description, event types, enabled
//   DELETE /v1/admin/webhooks/{id}                              remove; its pending deliveries are skipped
//   GET    /v1/admin/webhooks/{id}/deliveries                   its deliveries, newest first, with their attempts
//   POST   /v1/admin/webhooks/{id}/deliveries/{delivery_id}/replay   the same event again, as a new delivery
// A URL is refused when checkUrl refuses it (loopback, private and link-local addresses unless
// MODELGATE_WEBHOOK_ALLOW_PRIVATE). It may carry a token in its query: answered as registered to the
// admin who registered it, never logged. `wh_settings` (MODELGATE_WEBHOOK_URL) may only be enabled
// or disabled, and not deleted: the settings own it.
import { readRequestBody } from '../../core/body.js';
import { GatewayError } from '../../core/errors.js';
import { sendJson } from '../../core/respond.js';
import type { RequestContext } from '../../core/context.js';
import { storeGuarded } from '../../core/store-guard.js';
import type { Route } from '../../core/pipeline.js';
import { ALL_EVENTS, parseEndpointBody, type EndpointCreateBody, type EndpointFieldsBody } from './admin-body.js';
import { MAX_ENDPOINTS, SETTINGS_ENDPOINT_ID, type Endpoint, type EndpointChange, type Endpoints } from './endpoints.js';
import { DELIVERY_STATUSES, type AttemptRecord, type Delivery, type DeliveryStatus, type Outbox } from './outbox.js';
import { adminOnly, NO_STORE, pageLimit, queryParam } from '../../core/admin-api.js';

const BODY_LIMIT = 16 * 1024;
/** Attempts shown per delivery: the latest ones. */
export const MAX_ATTEMPT_LOG = 20;
const ENDPOINT_ID = /^wh_([0-9a-f]{24}|settings)$/;
const DELIVERY_ID = /^dlv_[0-9a-f]{24}$/;

export interface WebhookAdminDeps {
  endpoints: Endpoints;
  outbox: Outbox;
  /** MODELGATE_BODY_IDLE_TIMEOUT. */
  bodyIdleMs: number;
  /** MODELGATE_WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  /** The event types of the catalogue: what an endpoint may subscribe to (besides `*`). */
  eventTypes: readonly string[];
  /** Why `url` may not receive webhooks (shown to the admin as a 400; it must not quote the URL), or undefined when it may. */
  checkUrl(url: string, allowPrivate: boolean): Promise<string | undefined>;
  /** Something was queued: the dispatcher looks now. */
  wake(): void;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A URL as answered: the values of its query (where tokens usually ride) masked. */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    for (const name of [...new Set(parsed.searchParams.keys())]) parsed.searchParams.set(name, '***');
    return parsed.toString();
  } catch {
    return url;
  }
}

export function apiEndpoint(endpoint: Endpoint) {
  return {
    id: endpoint.id,
    object: 'webhook_endpoint',
    url: shownUrl(endpoint.url),
    description: endpoint.description,
    event_types: endpoint.eventTypes,
    enabled: endpoint.enabled,
    disabled_reason: endpoint.disabledReason,
    source: endpoint.source,
    created_at: iso(endpoint.createdAt),
    updated_at: iso(endpoint.updatedAt),
  };
}

export function apiDelivery(delivery: Delivery, attempts: readonly AttemptRecord[]) {
  return {
    id: delivery.id,
    object: 'webhook_delivery',
    event_id: delivery.event_id,
    event_type: delivery.event_type,
    status: delivery.status,
    attempts: delivery.attempts,
    next_attempt_at: delivery.status === 'pending' ? iso(delivery.next_attempt_at) : null,
    created_at: iso(delivery.created_at),
    delivered_at: iso(delivery.delivered_at),
    last_status_code: delivery.last_status_code,
    last_latency_ms: delivery.last_latency_ms,
    last_error: delivery.last_error,
    replay_of: delivery.replay_of,
    attempt_log: attempts.slice(-MAX_ATTEMPT_LOG).map((a) => ({ at: iso(a.at), ok: a.ok, status_code: a.statusCode, latency_ms: a.latencyMs, error: a.error })),
  };
}

/** The path's endpoint id; an id of another shape names no endpoint: no database lookup for it. */
function endpointId(ctx: RequestContext): string {
  const id = ctx.params.id!;
  if (!ENDPOINT_ID.test(id)) throw new GatewayError('webhook_not_found', { param: 'id' });
  return id;
}

/** A page in the list shape of every admin list; `hasMore`: a row past the page was found. */
function page<T extends { id: string }>(data: T[], hasMore: boolean) {
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore };
}

export function webhookAdminRoutes(deps: WebhookAdminDeps): Route[] {
  const body = (ctx: RequestContext) => readRequestBody(ctx.req, { maxBytes: BODY_LIMIT, idleMs: deps.bodyIdleMs });
  return routes(deps, body).map((route) => storeGuarded(route, 'webhooks'));
}

function routes(deps: WebhookAdminDeps, body: (ctx: RequestContext) => Promise<Buffer>): Route[] {
  const { endpoints, outbox } = deps;

  const found = async (id: string): Promise<Endpoint> => {
    const endpoint = await endpoints.get(id);
    if (!endpoint) throw new GatewayError('webhook_not_found', { param: 'id' });
    return endpoint;
  };

  const checkedUrl = async (url: string): Promise<string> => {
    // A check that fails (its DNS lookup, say) is the URL's problem, not the store's: no 503 for it.
    const problem = await deps.checkUrl(url, deps.allowPrivate).catch(() => 'url could not be checked (its host did not resolve?): the gateway sends only to addresses it has checked');
    if (problem !== undefined) throw new GatewayError('bad_request', { param: 'url', message: problem });
    return url;
  };

  /** The deliveries with their attempt logs, as answered. */
  const withAttempts = async (deliveries: Delivery[]) => {
    const attempts = await outbox.attempts(deliveries.map((d) => d.id));
    return deliveries.map((d) => apiDelivery(d, attempts.get(d.id) ?? []));
  };

  return [
    {
      method: 'POST',
      path: '/v1/admin/webhooks',
      async handle(ctx) {
        adminOnly(ctx);
        const input = parseEndpointBody<EndpointCreateBody>(await body(ctx), 'create', deps.eventTypes);
        const url = await checkedUrl(input.url);
        // Every event fans out to every endpoint that takes it: their number is bounded. (Two creates
        // racing at the bound may pass it by one each; the bound is on cost, not a contract.)
        if ((await endpoints.count()) >= MAX_ENDPOINTS) {
          throw new GatewayError('conflict', { code: 'too_many_webhooks', message: `The gateway has ${MAX_ENDPOINTS} webhook endpoints, the most it takes: delete one first` });
        }
        const endpoint = await endpoints.create({ url, description: input.description ?? null, eventTypes: input.event_types ?? [ALL_EVENTS], enabled: input.enabled ?? true });
        ctx.log.info({ webhookId: endpoint.id, by: ctx.principal!.keyId }, 'webhooks: endpoint registered');
        sendJson(ctx, 201, apiEndpoint(endpoint), NO_STORE);
      },
    },
    {
      method: 'GET',
      path: '/v1/admin/webhooks',
      async handle(ctx) {
        adminOnly(ctx);
        const limit = pageLimit(ctx);
        const afterId = queryParam(ctx, 'after', ENDPOINT_ID);
        const after = afterId === undefined ? undefined : await endpoints.get(afterId);
        if (afterId !== undefined && !after) throw new GatewayError('bad_request', { param: 'after', message: 'after names no webhook endpoint (deleted, or never one)' });
        const rows = await endpoints.page(limit + 1, after);
        sendJson(ctx, 200, page(rows.slice(0, limit).map(apiEndpoint), rows.length > limit), NO_STORE);
      },
    },
    {
      method: 'GET',
      path: '/v1/admin/webhooks/{id}',
      async handle(ctx) {
        adminOnly(ctx);
        sendJson(ctx, 200, apiEndpoint(await found(endpointId(ctx))), NO_STORE);
      },
    },
    {
      method: 'PATCH',
      path: '/v1/admin/webhooks/{id}',
      async handle(ctx) {
        adminOnly(ctx);
        const id = endpointId(ctx);
        // An unknown endpoint is a 404 whatever the body says.
        const current = await found(id);
        const input = parseEndpointBody<EndpointFieldsBody>(await body(ctx), 'change', deps.eventTypes);
        if (current.source === 'settings') {
          const owned = Object.keys(input).find((field) => field !== 'enabled');
          if (owned) throw new GatewayError('bad_request', { param: owned, message: `This endpoint comes from MODELGATE_WEBHOOK_URL: change the settings to change its ${owned}; here it may only be enabled or disabled` });
        }
        const change: EndpointChange = { description: input.description, eventTypes: input.event_types, enabled: input.enabled };
        if (input.url !== undefined) change.url = await checkedUrl(input.url);
        const endpoint = await endpoints.update(id, change);
        if (!endpoint) throw new GatewayError('webhook_not_found', { param: 'id' });
        // Disabled: what was waiting for it will not go (re-enabling does not bring it back; replay does).
        if (input.enabled === false) await outbox.skipPending(id, 'endpoint disabled');
        ctx.log.info({ webhookId: id, by: ctx.principal!.keyId, fields: Object.keys(input) }, 'webhooks: endpoint changed');
        sendJson(ctx, 200, apiEndpoint(endpoint), NO_STORE);
      },
    },
    {
      method: 'DELETE',
      path: '/v1/admin/webhooks/{id}',
      async handle(ctx) {
        adminOnly(ctx);
        const id = endpointId(ctx);
        if (id === SETTINGS_ENDPOINT_ID) {
          await found(id);
          throw new GatewayError('bad_request', { param: 'id', message: 'This endpoint comes from MODELGATE_WEBHOOK_URL: unset the setting to remove it, or disable it here' });
        }
        if (!(await endpoints.remove(id))) throw new GatewayError('webhook_not_found', { param: 'id' });
        await outbox.skipPending(id, 'endpoint deleted');
        ctx.log.info({ webhookId: id, by: ctx.principal!.keyId }, 'webhooks: endpoint deleted');
        sendJson(ctx, 200, { id, object: 'webhook_endpoint', deleted: true }, NO_STORE);
      },
    },
    {
      method: 'GET',
      path: '/v1/admin/webhooks/{id}/deliveries',
      async handle(ctx) {
        adminOnly(ctx);
        const id = endpointId(ctx);
        await found(id);
        const limit = pageLimit(ctx);
        const afterId = queryParam(ctx, 'after', DELIVERY_ID);
        const status = queryParam(ctx, 'status', new RegExp(`^(${DELIVERY_STATUSES.join('|')})$`)) as DeliveryStatus | undefined;
        const after = afterId === undefined ? undefined : await outbox.get(afterId);
        if (afterId !== undefined && after?.endpoint_id !== id) {
          throw new GatewayError('bad_request', { param: 'after', message: 'after names no delivery of this endpoint (swept by retention, or never one)' });
        }
        const rows = await outbox.list(id, limit + 1, after, status);
        sendJson(ctx, 200, page(await withAttempts(rows.slice(0, limit)), rows.length > limit), NO_STORE);
      },
    },
    {
      method: 'POST',
      path: '/v1/admin/webhooks/{id}/deliveries/{delivery_id}/replay',
      async handle(ctx) {
        adminOnly(ctx);
        const id = endpointId(ctx);
        const deliveryId = ctx.params.delivery_id!;
        const endpoint = await found(id);
        const original = DELIVERY_ID.test(deliveryId) ? await outbox.get(deliveryId) : undefined;
        if (original?.endpoint_id !== id) throw new GatewayError('delivery_not_found', { param: 'delivery_id' });
        if (!endpoint.enabled) {
          throw new GatewayError('conflict', { code: 'webhook_disabled', message: 'This webhook endpoint is disabled: enable it (PATCH enabled: true) before replaying to it' });
        }
        // One delivery of an event in flight at a time: replays cannot pile up rows (or duplicates).
        if (original.status === 'pending' || (await outbox.pendingReplay(original.id))) {
          throw new GatewayError('conflict', { code: 'delivery_pending', message: 'This delivery (or a replay of it) is still pending: it is being made; replay it once it has ended' });
        }
        const replay = await outbox.replay(original);
        deps.wake();
        ctx.log.info({ webhookId: id, deliveryId: replay.id, replayOf: original.id, by: ctx.principal!.keyId }, 'webhooks: delivery replayed');
        sendJson(ctx, 202, apiDelivery(replay, []), NO_STORE);
      },
    },
  ];
}
