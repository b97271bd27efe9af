// The admin API of keys (plugins/keys/admin-routes.ts): admin keys only.
import { headers, RATE_LIMIT_HEADERS } from '../headers.js';
import { keyedErrors, keyedRefusal } from '../responses.js';
import type { Operation, Parameter, PathItem, Response } from '../types.js';

const json = (schema: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } });
const answer = (description: string, schema: string): Response => ({ description, headers: headers(...RATE_LIMIT_HEADERS, 'cache-control'), content: json(schema) });
const id: Parameter = { name: 'id', in: 'path', required: true, description: 'The key id (`key_…`).', schema: { type: 'string' } };
const requestId = { $ref: '#/components/parameters/RequestId' };
const query = (name: string, description: string, schema: Record<string, unknown> = { type: 'string' }): Parameter => ({ name, in: 'query', description, schema });

const forbidden = keyedRefusal('The key is not an admin key (code admin_required), or the IP filter refuses this client (code ip_not_allowed).');
const notFound = keyedRefusal('No key has this id (code key_not_found, `param` id).');
const badBody = keyedRefusal('The body is not JSON (code invalid_json) or breaks the schema (code invalid_request; `param` names the field, e.g. `limits.requests_per_minute`).');
const tooLarge = keyedRefusal('The body is larger than 64 KB (code request_too_large).');
const errors = (own: Record<string, Response>) => keyedErrors({ '403': forbidden, '503': keyedRefusal('The database does not answer (code store_unavailable), or the rate-limit store with MODELGATE_RATE_LIMIT_REDIS_FAILURE=refuse.', 'retry-after'), ...own });

const operation = (op: Omit<Operation, 'tags'>): Operation => ({ ...op, tags: ['Keys'] });

export const keyPaths: Record<string, PathItem> = {
  '/v1/admin/keys': {
    post: operation({
      operationId: 'createApiKey',
      summary: 'Create a key',
      description: 'Creates a key; the answer carries its secret (`key`), shown this once. Admin keys only.',
      parameters: [requestId],
      requestBody: { description: 'The new key.', required: true, content: json('ApiKeyCreate') },
      responses: { '201': answer('The key and its secret.', 'IssuedApiKey'), ...errors({ '400': badBody, '413': tooLarge }) },
    }),
    get: operation({
      operationId: 'listApiKeys',
      summary: 'List keys',
      description: 'Keys in id order, a page at a time: pass the last id of a page as `after` for the next. Filters combine. Admin keys only.',
      parameters: [
        query('limit', 'Keys per page, 1 to 100 (default 20).', { type: 'integer', minimum: 1, maximum: 100 }),
        query('after', 'The `last_id` of the previous page.'),
        query('name', 'Only keys with this name.'),
        query('owner', 'Only keys of this owner.'),
        query('search', 'Only keys whose name or owner contains this (any case), or whose prefix or id begins with it; at most 100 characters.', { type: 'string', minLength: 1, maxLength: 100 }),
        query('status', 'Only active or only revoked keys.', { type: 'string', enum: ['active', 'revoked'] }),
        query('prefix', 'Only keys whose prefix begins with this (`uc_…`).'),
        query('expiring_within', 'Only active keys expiring within this time from now: `7d` (days) or `12h` (hours).', { type: 'string', pattern: '^\\d{1,4}[dh]$' }),
        requestId,
      ],
      responses: { '200': answer('A page of keys.', 'ApiKeyList'), ...errors({ '400': keyedRefusal('A query parameter is not valid (code invalid_request, `param` names it).') }) },
    }),
  },
  '/v1/admin/keys/{id}': {
    get: operation({
      operationId: 'getApiKey',
      summary: 'One key',
      description: 'A key, without its secret. Admin keys only.',
      parameters: [id, requestId],
      responses: { '200': answer('The key.', 'ApiKey'), ...errors({ '404': notFound }) },
    }),
    patch: operation({
      operationId: 'updateApiKey',
      summary: 'Change a key',
      description: "Changes a key's name, owner, limits, allowed models or expiry; every replica applies it within a second. Admin keys only.",
      parameters: [id, requestId],
      requestBody: { description: 'The fields to change.', required: true, content: json('ApiKeyChange') },
      responses: { '200': answer('The key as changed.', 'ApiKey'), ...errors({ '400': badBody, '404': notFound, '413': tooLarge }) },
    }),
    delete: operation({
      operationId: 'revokeApiKey',
      summary: 'Revoke a key',
      description: 'Revokes a key (and the secret a regenerate replaced): every replica refuses it within a second with `Invalid API key`. The record stays. Admin keys only.',
      parameters: [id, requestId],
      responses: { '200': answer('The key, revoked.', 'ApiKey'), ...errors({ '404': notFound }) },
    }),
  },
  '/v1/admin/keys/{id}/regenerate': {
    post: operation({
      operationId: 'regenerateApiKey',
      summary: 'Regenerate a key',
      description:
        'Gives the key a new secret, shown this once; the id, limits, budgets and history stay. The old secret keeps working for MODELGATE_API_KEY_ROTATION_GRACE seconds, then answers `API key expired`. With rotation on, the key expires the rotation interval from now. With an `Idempotency-Key`, a retry within 24 hours regenerates nothing: within 10 minutes it answers the same (secret included), later 409. Admin keys only.',
      parameters: [
        id,
        { name: 'Idempotency-Key', in: 'header', description: '1 to 200 printable ASCII characters, unique per intended regenerate.', schema: { type: 'string' } },
        requestId,
      ],
      responses: {
        '200': answer('The key and its new secret.', 'IssuedApiKey'),
        ...errors({
          '400': keyedRefusal('The Idempotency-Key header is not valid (code invalid_request).'),
          '404': notFound,
          '409': keyedRefusal('The key is revoked (code key_revoked), or the Idempotency-Key was used and its answer can no longer be repeated (code idempotency_key_used).'),
        }),
      },
    }),
  },
};
