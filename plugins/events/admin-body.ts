// What the webhook admin API accepts: the body of a create and of a change, as JSON schemas checked
// by ajv, then the event types against the catalogue. Everything is bounded (URL and description
// lengths, event types per endpoint); a refusal names the field (`param`), as OpenAI's 400s do.
import { Ajv } from 'ajv';
import { GatewayError } from '../../core/errors.js';
import { validatedBody } from '../../core/admin-api.js';
import { lazy, lazyValidator } from '../../core/lazy-validator.js';

export const MAX_URL = 2048;
export const MAX_DESCRIPTION = 500;
export const MAX_EVENT_TYPES = 50;
/** The event type every endpoint may take: all of them, those added later included. */
export const ALL_EVENTS = '*';

const endpointFields = {
  url: { type: 'string', minLength: 1, maxLength: MAX_URL },
  description: { anyOf: [{ type: 'string', maxLength: MAX_DESCRIPTION }, { type: 'null' }] },
  event_types: { type: 'array', minItems: 1, maxItems: MAX_EVENT_TYPES, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 200 } },
  enabled: { type: 'boolean' },
} as const;

export interface EndpointFieldsBody {
  url?: string;
  description?: string | null;
  event_types?: string[];
  enabled?: boolean;
}
export interface EndpointCreateBody extends EndpointFieldsBody {
  url: string;
}

export const endpointCreateSchema = { type: 'object', additionalProperties: false, required: ['url'], properties: endpointFields } as const;
export const endpointChangeSchema = { type: 'object', additionalProperties: false, minProperties: 1, properties: endpointFields } as const;

// Compiled on the first request that needs them, not at every start.
const ajv = lazy(() => new Ajv({ allErrors: false, strict: true, allowUnionTypes: true }));
const validateCreate = lazyValidator(() => ajv().compile<EndpointCreateBody>(endpointCreateSchema));
const validateChange = lazyValidator(() => ajv().compile<EndpointFieldsBody>(endpointChangeSchema));


/**
 * The body of a create or a change, checked; `eventTypes` are the types the catalogue knows. Each
 * listed type must be one of them or `*`: a typo would otherwise register an endpoint that never
 * receives anything.
 */
export function parseEndpointBody<T extends EndpointFieldsBody>(raw: Buffer, kind: 'create' | 'change', eventTypes: readonly string[]): T {
  const fields = validatedBody(raw, kind === 'create' ? validateCreate : validateChange) as T;
  fields.event_types?.forEach((type, i) => {
    if (type !== ALL_EVENTS && !eventTypes.includes(type)) {
      throw new GatewayError('bad_request', { param: `event_types.${i}`, message: `event_types.${i} is not an event type the gateway sends (${JSON.stringify(type.slice(0, 200))}); use "*" for every type` });
    }
  });
  return fields;
}
