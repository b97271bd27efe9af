// GET /v1/openapi.json: the description of this gateway's routes, for SDK generators, API
// explorers and gateways in front. No key, since it holds no secret and tells how to get one in;
// IP-filtered like every route but health.
import type { Route } from '../pipeline.js';
import { sendJson } from '../respond.js';
import type { OpenApiDocument } from './types.js';

/** `describe` is asked once, at the first request: by then every route is registered. */
export function openApiRoute(describe: () => OpenApiDocument): Route {
  let document: OpenApiDocument | undefined;
  return {
    method: 'GET',
    path: '/v1/openapi.json',
    public: true,
    async handle(ctx) {
      sendJson(ctx, 200, (document ??= describe()));
    },
  };
}
