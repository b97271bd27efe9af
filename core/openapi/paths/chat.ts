// POST /v1/chat/completions: the request path of DESIGN.md (IP filter, auth, body, rate limit, cost
// guard, cache, router, failover) and every answer it can end in. Override headers come from the
// plugins' declarations, as the body's `modelgate` object does. POST /v1/responses and
// /v1/embeddings run the same pipeline: they share its parameters, headers and refusals from here.
import type { OverrideSpec } from '../../overrides.js';
import { headers, RATE_LIMIT_HEADERS, type HeaderName } from '../headers.js';
import { keyedRefusal as keyedRefusalOf } from '../responses.js';
import type { Parameter, PathItem, Reference, Response, Schema } from '../types.js';

/** The headers that set override fields: a list travels comma-separated. */
function overrideHeaders(overrides: readonly OverrideSpec[]): Parameter[] {
  return overrides.flatMap((spec) =>
    Object.entries(spec.headers).map(([header, field]) => {
      const { description, ...schema } = spec.fields[field]!;
      return {
        name: header,
        in: 'header' as const,
        description: `Sets modelgate.${spec.name}.${field}: ${description}${schema.type === 'array' ? ' Comma-separated.' : ''}`,
        schema: schema.type === 'array' ? { type: 'string' } : (schema as Schema),
      };
    }),
  );
}

/** The request parameters of every pipeline route: the request id, the overrides, the cache switches. */
export function pipelineParameters(overrides: readonly OverrideSpec[]): Array<Parameter | Reference> {
  return [
    { $ref: '#/components/parameters/RequestId' },
    ...overrideHeaders(overrides),
    { name: 'x-modelgate-cache', in: 'header', description: '`bypass`: neither read nor store this request in the cache.', schema: { type: 'string', enum: ['bypass'] } },
    {
      name: 'cache-control',
      in: 'header',
      description: '`no-store`: neither read nor store this request in the cache; `no-cache`: do not read, but store the fresh answer.',
      schema: { type: 'string' },
    },
  ];
}

/** The headers of a pipeline route's success: what happened to the request, and the rate limit. */
export const OUTCOME_HEADERS = headers(
  'x-modelgate-provider',
  'x-modelgate-model',
  'x-modelgate-strategy',
  'x-modelgate-cache',
  'x-modelgate-attempts',
  'x-modelgate-cost',
  'x-modelgate-experiment',
  'trailer',
  ...RATE_LIMIT_HEADERS,
);

/**
 * The refusals every pipeline route can give, by status; `own` rewords or adds the ones a route
 * words itself (its 400, its 404).
 */
export function pipelineRefusals(own: Record<string, Response> = {}): Record<string, Response | Reference> {
  // A request an A/B experiment assigned keeps its x-modelgate-experiment on a later refusal.
  const keyedRefusal = (description: string, ...names: HeaderName[]) => keyedRefusalOf(description, 'x-modelgate-experiment', ...names);
  return {
    '400': keyedRefusal(
      "The body is not JSON (code invalid_json); it nests deeper than MODELGATE_MAX_JSON_DEPTH (code json_too_deep, `param` names the field); a field, override or header is invalid (code invalid_request, `param` names it); no model fits the request's constraints (code no_model_fits: context length, tools, quality, cost…); or no provider can express it. A provider's own 400 is passed back as is.",
    ),
    '401': { $ref: '#/components/responses/Unauthorized' },
    '403': keyedRefusal('The IP filter refuses this client (code ip_not_allowed), or the model has no price and unpriced models are not allowed (code model_unpriced), or the key may not use the model (code model_not_allowed).'),
    '404': keyedRefusal('`Model not found` (unknown model, code model_not_found) or `Model unavailable` (no configured provider serves it, code model_unavailable); a provider\'s own 404 is passed back as is.'),
    '413': keyedRefusal("The body is larger than MODELGATE_MAX_BODY_SIZE (code request_too_large; the connection is closed, and no x-ratelimit-* is sent); a provider's own 413 is passed back as is."),
    '429': keyedRefusal(
      "`Rate limit exceeded`: the key's rate limit (code rate_limit_exceeded; with x-should-retry false when the request alone needs more than a minute's tokens) or every provider's (code provider_rate_limited). Or the cost guard (type insufficient_quota): a budget spent (code insufficient_quota) or paused (code budget_paused) until it resets, or the request's estimate over the per-request cost limit (code cost_per_request_exceeded).",
      'retry-after',
      'retry-after-ms',
      'x-should-retry',
    ),
    '502': keyedRefusal("A provider answered with something the gateway could not use, or every provider refused the gateway's own credentials (code bad_gateway or the provider's)."),
    '503': keyedRefusal(
      '`Provider unavailable`: no provider could answer (code provider_unavailable, or upstream_timeout when every attempt timed out), or every candidate waits out a provider\'s Retry-After or an open circuit (code provider_cooling_down or circuit_open). Or a store the request needs does not answer: the rate-limit store, the budget store or the spend ledger (code store_unavailable or ledger_unavailable).',
      'retry-after',
    ),
    '4XX': keyedRefusal("Another 4xx a provider answered (e.g. 422): the request's fault, passed back as is, never retried."),
    ...Object.fromEntries(Object.entries(own).map(([status, response]) => [status, { ...response, headers: { ...response.headers, ...headers('x-modelgate-experiment') } }])),
  };
}

export function chatPaths(overrides: readonly OverrideSpec[]): Record<string, PathItem> {
  return {
    '/v1/chat/completions': {
      post: {
        operationId: 'createChatCompletion',
        tags: ['Chat'],
        summary: 'Create a chat completion',
        description:
          'Routes the request to a provider by the strategy (or to the pinned `provider/model`), with failover, retries, the response cache and the rate and cost limits. `stream: true` answers with server-sent events; once the first event is sent the provider is never switched, and a failure ends the stream with an error event.',
        parameters: pipelineParameters(overrides),
        requestBody: {
          description: 'At most MODELGATE_MAX_BODY_SIZE MB.',
          required: true,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/ChatCompletionRequest' } } },
        },
        responses: {
          '200': {
            description: 'The completion (`application/json`), or with `stream: true` its chunks as server-sent events ending with `data: [DONE]`.',
            headers: OUTCOME_HEADERS,
            content: {
              'application/json': { schema: { $ref: '#/components/schemas/ChatCompletion' } },
              'text/event-stream': {
                schema: { type: 'string', description: 'Events `data: <JSON>`, then `data: [DONE]`; a stream the provider broke ends with an error event and no [DONE].' },
                'x-event-data': { oneOf: [{ $ref: '#/components/schemas/ChatCompletionChunk' }, { $ref: '#/components/schemas/ErrorBody' }] },
              },
            },
          },
          ...pipelineRefusals(),
        },
      },
    },
  };
}
