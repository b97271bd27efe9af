// What every route of the admin API (/v1/admin/…: keys, webhooks, request records) does the same
// way: admin keys only, query parameters checked before any lookup, pages of `limit` (1 to 100) with
// an `after` cursor, and JSON bodies validated by a schema into a 400 that names the field.
import type { ErrorObject, ValidateFunction } from 'ajv';
import { GatewayError } from './errors.js';
import type { RequestContext } from './context.js';

export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 100;
/** Admin answers hold what only an admin may read: never kept by a cache on the way. */
export const NO_STORE = { 'cache-control': 'no-store' };

export function adminOnly(ctx: RequestContext): void {
  if (!ctx.principal?.admin) throw new GatewayError('admin_required');
}

/** A query parameter, refused (400 naming it) when empty, longer than `max` or not of `pattern`. */
export function queryParam(ctx: RequestContext, name: string, pattern?: RegExp, max = 200): string | undefined {
  const value = ctx.query.get(name) ?? undefined;
  if (value !== undefined && (value.length === 0 || value.length > max || (pattern && !pattern.test(value)))) {
    throw new GatewayError('bad_request', { param: name, message: `${name} is not valid` });
  }
  return value;
}

/** `limit`: 1 to MAX_PAGE, DEFAULT_PAGE when absent. */
export function pageLimit(ctx: RequestContext): number {
  const text = queryParam(ctx, 'limit', /^\d{1,3}$/);
  const limit = text === undefined ? DEFAULT_PAGE : Number(text);
  if (limit < 1 || limit > MAX_PAGE) throw new GatewayError('bad_request', { param: 'limit', message: `limit must be between 1 and ${MAX_PAGE}` });
  return limit;
}

/** A JSON body checked by `validate`: 400 `invalid_json`, or a 400 naming the first field that is wrong. */
export function validatedBody<T>(raw: Buffer, validate: ValidateFunction<T>): T {
  let body: unknown;
  try {
    body = raw.length === 0 ? {} : JSON.parse(raw.toString('utf8'));
  } catch {
    throw new GatewayError('invalid_json');
  }
  if (!validate(body)) throw bodyRefusal(validate.errors?.[0]);
  return body;
}

function bodyRefusal(error: ErrorObject | undefined): GatewayError {
  if (!error) return new GatewayError('bad_request', { message: 'Invalid request body' });
  const path = error.instancePath.slice(1).replaceAll('/', '.');
  const param =
    error.keyword === 'additionalProperties'
      ? [path, (error.params as { additionalProperty: string }).additionalProperty].filter(Boolean).join('.')
      : error.keyword === 'required'
        ? (error.params as { missingProperty: string }).missingProperty
        : path || null;
  const what = error.keyword === 'additionalProperties' ? 'is not a known field' : error.keyword === 'required' ? 'is required' : (error.message ?? 'is invalid');
  return new GatewayError('bad_request', { param, message: `${param ?? 'The body'} ${what}` });
}
