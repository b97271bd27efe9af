// The admin API of request records (admin keys only; anything else is refused 403 admin_required):
//   GET /v1/admin/requests        list, newest first: limit, after (cursor), start, end, key_id, model, status, user
//   GET /v1/admin/requests/{id}   one record, its bodies decrypted (or `bodies: null` and `decrypt_error`)
// `user` is the raw OpenAI `user` value: it is matched by its pseudonym, the only form stored.
import { GatewayError } from '../errors.js';
import { sendJson } from '../respond.js';
import type { RequestContext } from '../context.js';
import { storeGuarded } from '../store-guard.js';
import type { Route } from '../pipeline.js';
import type { Anonymizer } from '../anonymize.js';
import type { RecordQuery, RecordReader } from './reader.js';
import { apiRecord } from './reader.js';
import { adminOnly, NO_STORE, pageLimit, queryParam } from '../admin-api.js';

const RECORD_ID = /^rec_[0-9a-f]{32}$/;
// An ISO 8601 date, or date and time with a zone (Z or ±hh:mm).
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

function time(ctx: RequestContext, name: string): number | undefined {
  const text = queryParam(ctx, name);
  if (text === undefined) return undefined;
  const ms = ISO_TIME.test(text) ? Date.parse(text) : Number.NaN;
  if (!Number.isFinite(ms)) throw new GatewayError('bad_request', { param: name, message: `${name} must be an ISO 8601 date or date-time (2026-11-26 or 2026-11-26T10:00:00Z)` });
  return ms;
}

export function listQuery(ctx: RequestContext, anonymizer: Anonymizer): RecordQuery {
  const limit = pageLimit(ctx);
  const start = time(ctx, 'start');
  const end = time(ctx, 'end');
  if (start !== undefined && end !== undefined && end <= start) throw new GatewayError('bad_request', { param: 'end', message: 'end must be after start' });
  const status = queryParam(ctx, 'status', /^[1-5]\d\d$/);
  const user = queryParam(ctx, 'user', undefined, 512);
  return {
    limit,
    after: queryParam(ctx, 'after', RECORD_ID),
    start,
    end,
    keyId: queryParam(ctx, 'key_id'),
    model: queryParam(ctx, 'model'),
    status: status === undefined ? undefined : Number(status),
    endUser: user === undefined ? undefined : anonymizer.pseudonym(user),
  };
}

export function recordRoutes(reader: RecordReader, anonymizer: Anonymizer): Route[] {
  const routes: Route[] = [
    {
      method: 'GET',
      path: '/v1/admin/requests',
      async handle(ctx) {
        adminOnly(ctx);
        const page = await reader.list(listQuery(ctx, anonymizer));
        if (!page.cursorFound) throw new GatewayError('bad_request', { param: 'after', message: 'after names no request record (deleted by retention, or never one)' });
        const data = page.rows.map(apiRecord);
        sendJson(ctx, 200, { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.hasMore }, NO_STORE);
      },
    },
    {
      method: 'GET',
      path: '/v1/admin/requests/{id}',
      async handle(ctx) {
        adminOnly(ctx);
        const id = ctx.params.id!;
        // An id of another shape names no record: no lookup for it.
        const record = RECORD_ID.test(id) ? await reader.get(id) : undefined;
        if (!record) throw new GatewayError('record_not_found', { param: 'id' });
        sendJson(ctx, 200, record, NO_STORE);
      },
    },
  ];
  return routes.map((route) => storeGuarded(route, 'request records'));
}
