// The admin API of request records (core/records/routes.ts): admin keys only.
import { headers, RATE_LIMIT_HEADERS } from '../headers.js';
import { keyedErrors, keyedRefusal } from '../responses.js';
import type { Operation, Parameter, PathItem, Response } from '../types.js';

const json = (schema: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } });
const answer = (description: string, schema: string): Response => ({ description, headers: headers(...RATE_LIMIT_HEADERS, 'cache-control'), content: json(schema) });
const requestId = { $ref: '#/components/parameters/RequestId' };
const query = (name: string, description: string, schema: Record<string, unknown> = { type: 'string' }): Parameter => ({ name, in: 'query', description, schema });

const forbidden = keyedRefusal('The key is not an admin key (code admin_required), or the IP filter refuses this client (code ip_not_allowed).');
const errors = (own: Record<string, Response>) => keyedErrors({ '403': forbidden, '503': keyedRefusal('The database does not answer (code store_unavailable), or the rate-limit store with MODELGATE_RATE_LIMIT_REDIS_FAILURE=refuse.', 'retry-after'), ...own });
const operation = (op: Omit<Operation, 'tags'>): Operation => ({ ...op, tags: ['Request records'] });

export const recordPaths: Record<string, PathItem> = {
  '/v1/admin/requests': {
    get: operation({
      operationId: 'listRequestRecords',
      summary: 'List request records',
      description: 'Recorded requests (MODELGATE_REQUEST_RECORDS), newest first, a page at a time, without their bodies: pass the last id of a page as `after` for the next. Filters combine. Admin keys only.',
      parameters: [
        query('limit', 'Records per page, 1 to 100 (default 20).', { type: 'integer', minimum: 1, maximum: 100 }),
        query('after', 'The `last_id` of the previous page.', { type: 'string', pattern: '^rec_[0-9a-f]{32}$' }),
        query('start', 'Only requests started at or after this ISO 8601 date (UTC midnight) or date-time with its zone (`Z` or `±hh:mm`).', { type: 'string' }),
        query('end', 'Only requests started before this ISO 8601 date (UTC midnight) or date-time with its zone.', { type: 'string' }),
        query('key_id', 'Only requests made with this key id.'),
        query('model', 'Only requests that asked for, or were routed to, this model.'),
        query('status', 'Only requests answered with this HTTP status.', { type: 'integer', minimum: 100, maximum: 599 }),
        query('user', "Only requests whose OpenAI `user` was this value (matched by its pseudonym; the value is not stored)."),
        requestId,
      ],
      responses: { '200': answer('A page of records.', 'RequestRecordList'), ...errors({ '400': keyedRefusal('A query parameter is not valid (code invalid_request, `param` names it).') }) },
    }),
  },
  '/v1/admin/requests/{id}': {
    get: operation({
      operationId: 'getRequestRecord',
      summary: 'One request record',
      description: 'A record with its request and response bodies, decrypted. A record whose key is gone or whose envelope does not authenticate answers 200 with `bodies: null` and `decrypt_error`. Admin keys only.',
      parameters: [{ name: 'id', in: 'path', required: true, description: 'The record id (`rec_…`).', schema: { type: 'string' } }, requestId],
      responses: { '200': answer('The record.', 'RequestRecord'), ...errors({ '404': keyedRefusal('No record has this id (code record_not_found, `param` id).') }) },
    }),
  },
};
