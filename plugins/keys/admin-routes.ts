// The admin API of keys (admin keys only; anything else is refused 403 admin_required):
//   POST   /v1/admin/keys                   create; 201 with the secret (`key`), shown this once
//   GET    /v1/admin/keys                   list: limit, after (cursor), name, owner, search, status, prefix, expiring_within
//   GET    /v1/admin/keys/{id}              one key
//   PATCH  /v1/admin/keys/{id}              change name, owner, limits, allowed models, expiry
//   POST   /v1/admin/keys/{id}/regenerate   new secret, same id; the old one works for the grace period
//   DELETE /v1/admin/keys/{id}              revoke
// No answer or log line carries a secret other than the one just issued, nor any hash.
import { readRequestBody } from '../../core/body.js';
import { GatewayError } from '../../core/errors.js';
import { sendJson } from '../../core/respond.js';
import type { RequestContext } from '../../core/context.js';
import { storeGuarded } from '../../core/store-guard.js';
import type { Route } from '../../core/pipeline.js';
import type { Notification } from '../../core/events.js';
import { parseBody, parseTime, type CreateBody, type KeyFieldsBody } from './admin-body.js';
import { apiRecord } from './api-record.js';
import { MAX_IDEMPOTENCY_KEY, type Issued, type KeyAdmin } from './key-admin.js';
import type { KeyChanges, KeyRow, KeyRows, ListQuery } from './key-rows.js';
import { adminOnly, NO_STORE, pageLimit, queryParam } from '../../core/admin-api.js';

const BODY_LIMIT = 64 * 1024;
const KEY_ID = /^key_[A-Za-z0-9_-]{1,64}$/;
const PREFIX = /^uc_[A-Za-z0-9_-]{0,40}$/;
const WITHIN = /^(\d{1,4})([dh])$/;

export interface AdminRouteDeps {
  admin: KeyAdmin;
  rows: KeyRows;
  /** Tells the outside world (key.created, key.regenerated, key.revoked: docs/events.md). */
  notify(notification: Notification): void;
  /** MODELGATE_BODY_IDLE_TIMEOUT. */
  bodyIdleMs: number;
}

/** What a key event says of the key: never its secret, its hash or its limits. */
function keyEvent(type: string, row: KeyRow, ctx: RequestContext): Notification {
  return { type, data: { key_id: row.id, name: row.name, expires_at: row.expires_at === null ? null : new Date(Number(row.expires_at)).toISOString(), by_key_id: ctx.principal?.keyId ?? null } };
}

function keyId(ctx: RequestContext): string {
  const id = ctx.params.id!;
  // An id of another shape names no key: no database lookup for it.
  if (!KEY_ID.test(id)) throw new GatewayError('key_not_found', { param: 'id' });
  return id;
}

function changesOf(body: KeyFieldsBody): KeyChanges {
  return {
    name: body.name,
    owner: body.owner,
    limits: body.limits,
    allowedModels: body.allowed_models,
    expiresAt: parseTime(body.expires_at),
  };
}

const issued = (result: Issued) => ({
  ...apiRecord(result.row),
  key: result.secret,
  ...(result.previousExpiresAt === undefined ? {} : { previous_key_expires_at: result.previousExpiresAt === null ? null : new Date(result.previousExpiresAt).toISOString() }),
});

function listQuery(ctx: RequestContext, now: number): ListQuery {
  const limit = pageLimit(ctx);
  const status = queryParam(ctx, 'status', /^(active|revoked)$/) as ListQuery['status'];
  const within = queryParam(ctx, 'expiring_within', WITHIN);
  const match = within === undefined ? undefined : WITHIN.exec(within)!;
  return {
    limit,
    after: queryParam(ctx, 'after', KEY_ID),
    name: queryParam(ctx, 'name'),
    owner: queryParam(ctx, 'owner'),
    search: queryParam(ctx, 'search', undefined, 100),
    status,
    prefix: queryParam(ctx, 'prefix', PREFIX),
    expiringBefore: match ? now + Number(match[1]) * (match[2] === 'd' ? 86_400_000 : 3_600_000) : undefined,
    now,
  };
}

export function keyAdminRoutes(deps: AdminRouteDeps): Route[] {
  const body = (ctx: RequestContext) => readRequestBody(ctx.req, { maxBytes: BODY_LIMIT, idleMs: deps.bodyIdleMs });
  return routes(deps, body).map((route) => storeGuarded(route, 'keys'));
}

function routes(deps: AdminRouteDeps, body: (ctx: RequestContext) => Promise<Buffer>): Route[] {
  return [
    {
      method: 'POST',
      path: '/v1/admin/keys',
      async handle(ctx) {
        adminOnly(ctx);
        const input = parseBody<CreateBody>(await body(ctx), 'create');
        const result = await deps.admin.create({
          name: input.name,
          owner: input.owner,
          admin: input.admin ?? false,
          limits: input.limits,
          allowedModels: input.allowed_models,
          expiresAt: parseTime(input.expires_at),
        });
        ctx.log.info({ keyId: result.row.id, by: ctx.principal!.keyId }, 'keys: key created');
        deps.notify(keyEvent('key.created', result.row, ctx));
        sendJson(ctx, 201, issued(result), NO_STORE);
      },
    },
    {
      method: 'GET',
      path: '/v1/admin/keys',
      async handle(ctx) {
        adminOnly(ctx);
        const page = await deps.rows.list(listQuery(ctx, Date.now()));
        const data = page.rows.map(apiRecord);
        sendJson(ctx, 200, { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.hasMore }, NO_STORE);
      },
    },
    {
      method: 'GET',
      path: '/v1/admin/keys/{id}',
      async handle(ctx) {
        adminOnly(ctx);
        const row = await deps.rows.get(keyId(ctx));
        if (!row) throw new GatewayError('key_not_found', { param: 'id' });
        sendJson(ctx, 200, apiRecord(row), NO_STORE);
      },
    },
    {
      method: 'PATCH',
      path: '/v1/admin/keys/{id}',
      async handle(ctx) {
        adminOnly(ctx);
        const id = keyId(ctx);
        const row = await deps.admin.change(id, changesOf(parseBody<KeyFieldsBody>(await body(ctx), 'change')));
        ctx.log.info({ keyId: id, by: ctx.principal!.keyId }, 'keys: key changed');
        sendJson(ctx, 200, apiRecord(row), NO_STORE);
      },
    },
    {
      method: 'POST',
      path: '/v1/admin/keys/{id}/regenerate',
      async handle(ctx) {
        adminOnly(ctx);
        const id = keyId(ctx);
        const header = ctx.headers['idempotency-key'];
        const idempotencyKey = typeof header === 'string' ? header : undefined;
        if (idempotencyKey !== undefined && (idempotencyKey.length === 0 || idempotencyKey.length > MAX_IDEMPOTENCY_KEY || !/^[\x21-\x7e]+$/.test(idempotencyKey))) {
          throw new GatewayError('bad_request', { param: 'Idempotency-Key', message: `The Idempotency-Key header must be 1 to ${MAX_IDEMPOTENCY_KEY} printable characters` });
        }
        const result = await deps.admin.regenerate(id, idempotencyKey);
        ctx.log.info({ keyId: id, by: ctx.principal!.keyId }, 'keys: key regenerated');
        deps.notify(keyEvent('key.regenerated', result.row, ctx));
        sendJson(ctx, 200, issued(result), NO_STORE);
      },
    },
    {
      method: 'DELETE',
      path: '/v1/admin/keys/{id}',
      async handle(ctx) {
        adminOnly(ctx);
        const id = keyId(ctx);
        const row = await deps.admin.revoke(id);
        ctx.log.info({ keyId: id, by: ctx.principal!.keyId }, 'keys: key revoked');
        deps.notify(keyEvent('key.revoked', row, ctx));
        sendJson(ctx, 200, apiRecord(row), NO_STORE);
      },
    },
  ];
}
