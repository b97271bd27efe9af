// POST /v1/responses runs the chat pipeline (core/chat-body.ts turns the request into a chat
// request), so it takes the same override headers and gives the same refusals, plus its own: refused
// Responses features (400), an unknown previous_response_id (404), a continued conversation over the
// body limit (413). GET and DELETE /v1/responses/{response_id} read the key's stored responses.
import type { OverrideSpec } from '../../overrides.js';
import { headers, RATE_LIMIT_HEADERS } from '../headers.js';
import { keyedErrors, keyedRefusal } from '../responses.js';
import type { Parameter, PathItem } from '../types.js';
import { OUTCOME_HEADERS, pipelineParameters, pipelineRefusals } from './chat.js';

const json = (schema: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } });
const responseId: Parameter = { name: 'response_id', in: 'path', required: true, description: 'The response id (`resp_…`).', schema: { type: 'string' } };
const requestId = { $ref: '#/components/parameters/RequestId' };
const storeDown = keyedRefusal('The database holding stored responses does not answer (code store_unavailable), or the rate-limit store with MODELGATE_RATE_LIMIT_REDIS_FAILURE=refuse.');
const notFound = keyedRefusal(
  "No stored response has this id for this key (code response_not_found, `param` response_id): never stored (`store: false`), another key's, deleted, or older than MODELGATE_RESPONSES_RETENTION days.",
);

export function responsesPaths(overrides: readonly OverrideSpec[]): Record<string, PathItem> {
  return {
    '/v1/responses': {
      post: {
        operationId: 'createResponse',
        tags: ['Responses'],
        summary: 'Create a model response',
        description:
          "OpenAI's Responses API on any provider: the request is routed, limited, cached and failed over as a chat completion is. Requests routed to the `openai` provider go to OpenAI's own Responses endpoint; others are translated to each provider's chat API and the answer written back as a Response. With `store` (the default) the response is kept for MODELGATE_RESPONSES_RETENTION days, for this key only. `stream: true` answers with the Responses API's typed events.",
        parameters: pipelineParameters(overrides),
        requestBody: { description: 'At most MODELGATE_MAX_BODY_SIZE MB.', required: true, content: json('ResponseRequest') },
        responses: {
          '200': {
            description: 'The Response (`application/json`), or with `stream: true` its events as server-sent events (`event: <type>` + `data: <JSON>`, no `[DONE]`).',
            headers: OUTCOME_HEADERS,
            content: {
              ...json('Response'),
              'text/event-stream': {
                schema: { type: 'string', description: 'Events `event: <type>` + `data: <JSON>`; a failure after the first event is an `error` event then response.failed.' },
                'x-event-data': { $ref: '#/components/schemas/ResponseStreamEvent' },
              },
            },
          },
          ...pipelineRefusals({
            '400': keyedRefusal(
              "The body is not JSON (code invalid_json) or nests too deeply (code json_too_deep); a field is invalid (code invalid_request, `param` names it as the Responses API does, e.g. `input[2].content[0].type`); a feature the gateway does not offer (code unsupported_parameter: background, conversation, prompt, item references and other input item types; code unsupported_tool: any tool but function tools); an override is invalid; no model fits the request; or no provider can express it. A provider's own 400 is passed back as is.",
            ),
            '404': keyedRefusal(
              "`Model not found` (code model_not_found) or `Model unavailable` (code model_unavailable); or previous_response_id, or an item_reference input item, names no response or output item this key stored (code response_not_found, `param` previous_response_id or input[i].id). A provider's own 404 is passed back as is.",
            ),
            '413': keyedRefusal(
              "The body is larger than MODELGATE_MAX_BODY_SIZE (code request_too_large; the connection is closed), or the conversation continued from previous_response_id is (code request_too_large, `param` previous_response_id); neither sends x-ratelimit-*. A provider's own 413 is passed back as is.",
            ),
          }),
        },
      },
    },
    '/v1/responses/{response_id}': {
      get: {
        operationId: 'getResponse',
        tags: ['Responses'],
        summary: 'Retrieve a stored response',
        description: 'A response this key created with `store` (the default), as it was answered, within MODELGATE_RESPONSES_RETENTION days.',
        parameters: [responseId, requestId],
        responses: {
          '200': { description: 'The Response.', headers: headers(...RATE_LIMIT_HEADERS, 'cache-control'), content: json('Response') },
          ...keyedErrors({ '404': notFound, '503': storeDown }),
        },
      },
      delete: {
        operationId: 'deleteResponse',
        tags: ['Responses'],
        summary: 'Delete a stored response',
        description: 'Deletes a response this key stored; it can no longer be read or continued.',
        parameters: [responseId, requestId],
        responses: {
          '200': { description: 'Deleted.', headers: headers(...RATE_LIMIT_HEADERS), content: json('DeletedResponse') },
          ...keyedErrors({ '404': notFound, '503': storeDown }),
        },
      },
    },
  };
}
