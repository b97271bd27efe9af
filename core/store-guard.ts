// Admin routes that read or write the durable store (keys, request records): a database that fails
// or does not answer is a 503 store_unavailable with Retry-After, its cause logged; the route's own
// errors (400, 403, 404) pass as they are.
import { GatewayError, isGatewayError } from './errors.js';
import type { Route } from './pipeline.js';

/** `route` with the store's failures answered 503; `what` names the routes in the log line. */
export function storeGuarded(route: Route, what: string): Route {
  return {
    ...route,
    async handle(ctx) {
      try {
        await route.handle(ctx);
      } catch (error) {
        if (isGatewayError(error)) throw error;
        ctx.log.warn({ err: (error as Error).message }, `${what}: the database failed an admin call`);
        throw new GatewayError('store_unavailable', { headers: { 'retry-after': '1' }, cause: error });
      }
    },
  };
}
