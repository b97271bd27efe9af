// GET and DELETE /v1/responses/{id}: a stored response, for the key that made it only. Another
// key's id, an expired one and one never stored (`store: false`) all read as 404 — whether an id
// exists is itself not shown to other keys.
import { GatewayError } from '../errors.js';
import type { Route } from '../pipeline.js';
import { sendJson } from '../respond.js';
import { RESPONSE_ID } from './request.js';
import type { ResponseStore } from './store.js';

function notFound(id: string): GatewayError {
  return new GatewayError('response_not_found', { param: 'response_id', message: `Response with id '${id.slice(0, 64)}' not found.` });
}

export function responseRoutes(store: ResponseStore): Route[] {
  return [
    {
      method: 'GET',
      path: '/v1/responses/{response_id}',
      async handle(ctx) {
        const id = ctx.params.response_id!;
        const found = RESPONSE_ID.test(id) ? await store.get(id, ctx.principal?.keyId ?? '') : undefined;
        if (!found) throw notFound(id);
        sendJson(ctx, 200, found.response, { 'cache-control': 'no-store' });
      },
    },
    {
      method: 'DELETE',
      path: '/v1/responses/{response_id}',
      async handle(ctx) {
        const id = ctx.params.response_id!;
        if (!RESPONSE_ID.test(id) || !(await store.delete(id, ctx.principal?.keyId ?? ''))) throw notFound(id);
        sendJson(ctx, 200, { id, object: 'response', deleted: true }, { 'cache-control': 'no-store' });
      },
    },
  ];
}
