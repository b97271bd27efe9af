// Responses API schemas (POST /v1/responses, GET/DELETE /v1/responses/{id}), hand-written after
// OpenAI's (shared/protocol/openai-responses.schema.json) and cut to what the gateway reads and
// writes (core/responses/): the request is open, with the fields the gateway checks typed; the
// Response and its events are the gateway's own writing, whichever provider answered, so they list
// every field it sends and OpenAI's required ones.
import type { OverrideSpec } from '../../overrides.js';
import { METADATA_LIMITS } from '../../responses/request.js';
import type { Schema } from '../types.js';
import { overridesSchema } from './chat.js';

const nullable = (schema: Schema) => ({ anyOf: [schema, { type: 'null' }] });
const count = { type: 'integer', minimum: 0 };
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const itemStatus = { type: 'string', enum: ['in_progress', 'completed', 'incomplete'] };
const metadata = {
  type: 'object',
  description: `Up to ${METADATA_LIMITS.pairs} pairs: keys of at most ${METADATA_LIMITS.keyLength} characters, string values of at most ${METADATA_LIMITS.valueLength}.`,
  maxProperties: METADATA_LIMITS.pairs,
  propertyNames: { maxLength: METADATA_LIMITS.keyLength },
  additionalProperties: { type: 'string', maxLength: METADATA_LIMITS.valueLength },
};
const toolChoice = {
  anyOf: [
    { type: 'string', enum: ['none', 'auto', 'required'] },
    { type: 'object', required: ['type', 'name'], properties: { type: { const: 'function' }, name: { type: 'string' } } },
  ],
};
const textFormat = {
  type: 'object',
  required: ['type'],
  additionalProperties: true,
  properties: {
    type: { type: 'string', enum: ['text', 'json_object', 'json_schema'] },
    name: { type: 'string', description: 'json_schema: required.' },
    schema: { type: 'object', description: 'json_schema: required, a JSON Schema.' },
    description: { type: 'string' },
    strict: nullable({ type: 'boolean' }),
  },
};
const functionTool = {
  type: 'object',
  required: ['type', 'name'],
  additionalProperties: true,
  properties: {
    type: { const: 'function', description: "Only function tools: a built-in tool (web_search, file_search, …) is refused with 400 code unsupported_tool." },
    name: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
    description: nullable({ type: 'string' }),
    parameters: nullable({ type: 'object' }),
    strict: nullable({ type: 'boolean' }),
  },
};
/** Fields the gateway refuses (400 unsupported_parameter) unless absent, null or false. */
const refused = (why: string) => ({ description: `Refused (400, code unsupported_parameter) unless absent, null or false: ${why}` });

// Stream events: each names its type and sequence_number, and the fields OpenAI requires of it.
const where = { item_id: { type: 'string' }, output_index: count, content_index: count };
const event = (type: string, required: string[], properties: Record<string, Schema>) => ({
  type: 'object',
  required: ['type', 'sequence_number', ...required],
  properties: { type: { const: type }, sequence_number: count, ...properties },
});
const withResponse = (type: string) => event(type, ['response'], { response: ref('Response') });
/** One event of a streamed Response, by its `type` (also the SSE `event:` name). */
const responseStreamEvent = {
  description:
    "One event of a streamed Response, framed `event: <type>` + `data: <JSON>`, in OpenAI's order: response.created, response.in_progress; per output item output_item.added, its content (content_part.added, output_text.delta… / refusal.delta…, their .done, content_part.done; or function_call_arguments.delta… .done), output_item.done; then response.completed or response.incomplete with the whole Response and its usage. sequence_number counts from 0. No `[DONE]`. A failure after the first event is an `error` event then response.failed.",
  type: 'object',
  discriminator: { propertyName: 'type' },
  oneOf: [
    withResponse('response.created'),
    withResponse('response.in_progress'),
    withResponse('response.completed'),
    withResponse('response.incomplete'),
    withResponse('response.failed'),
    event('response.output_item.added', ['output_index', 'item'], { output_index: count, item: ref('ResponseOutputItem') }),
    event('response.output_item.done', ['output_index', 'item'], { output_index: count, item: ref('ResponseOutputItem') }),
    event('response.content_part.added', ['item_id', 'output_index', 'content_index', 'part'], { ...where, part: { oneOf: [ref('ResponseOutputText'), ref('ResponseRefusal')] } }),
    event('response.content_part.done', ['item_id', 'output_index', 'content_index', 'part'], { ...where, part: { oneOf: [ref('ResponseOutputText'), ref('ResponseRefusal')] } }),
    event('response.output_text.delta', ['item_id', 'output_index', 'content_index', 'delta', 'logprobs'], { ...where, delta: { type: 'string' }, logprobs: { type: 'array' } }),
    event('response.output_text.done', ['item_id', 'output_index', 'content_index', 'text', 'logprobs'], { ...where, text: { type: 'string' }, logprobs: { type: 'array' } }),
    event('response.refusal.delta', ['item_id', 'output_index', 'content_index', 'delta'], { ...where, delta: { type: 'string' } }),
    event('response.refusal.done', ['item_id', 'output_index', 'content_index', 'refusal'], { ...where, refusal: { type: 'string' } }),
    event('response.function_call_arguments.delta', ['item_id', 'output_index', 'delta'], { item_id: { type: 'string' }, output_index: count, delta: { type: 'string' } }),
    event('response.function_call_arguments.done', ['item_id', 'output_index', 'name', 'arguments'], { item_id: { type: 'string' }, output_index: count, name: { type: 'string' }, arguments: { type: 'string' } }),
    event('error', ['code', 'message', 'param'], {
      code: nullable({ type: 'string' }),
      message: { type: 'string' },
      param: nullable({ type: 'string' }),
      error: {
        type: 'object',
        description: 'The same error as the error body of a refusal has it (a gateway addition).',
        required: ['type', 'code', 'message', 'param'],
        properties: { type: { type: 'string' }, code: nullable({ type: 'string' }), message: { type: 'string' }, param: nullable({ type: 'string' }) },
      },
    }),
  ],
} as const;

export function responsesSchemas(overrides: readonly OverrideSpec[]) {
  return {
    ResponseRequest: {
      type: 'object',
      description:
        "OpenAI's Responses request. The fields below are checked (a bad one is a 400 whose `param` names it in the Responses API's terms, e.g. `input[2].content[0].type`); others go to OpenAI's own endpoint as sent and are dropped for other providers. The request becomes a chat request: instructions → a system message, input items → messages, function_call / function_call_output items → tool calls and tool messages, reasoning items dropped, text.format → response_format, max_output_tokens → max_completion_tokens.",
      required: ['model'],
      additionalProperties: true,
      properties: {
        model: { type: 'string', minLength: 1, maxLength: 256, description: "A catalog id, `provider/model`, or `auto`, as for chat completions." },
        input: {
          description:
            'A string (one user message) or a list of input items: messages (`{role, content}` or `type: message`; parts input_text, input_image with an image_url, input_file with file_data; an assistant may hold output_text and refusal), function_call, function_call_output (a string or input_text parts), reasoning items (dropped) and item_reference items naming output items of stored responses of this key (at most 1000). File ids and file URLs are refused (400). Required unless previous_response_id is set.',
          anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'object', additionalProperties: true, properties: { type: { type: 'string' }, role: { type: 'string', enum: ['user', 'assistant', 'system', 'developer'] } } } }],
        },
        instructions: nullable({ type: 'string' }),
        previous_response_id: nullable({
          type: 'string',
          description: "A response this key stored (within MODELGATE_RESPONSES_RETENTION days): its conversation comes before `input`. Unknown, another key's or expired: 404 code response_not_found; a conversation grown past MODELGATE_MAX_BODY_SIZE: 413.",
        }),
        store: nullable({ type: 'boolean', description: 'Keep the response for GET /v1/responses/{id} and previous_response_id (default true).' }),
        stream: nullable({ type: 'boolean' }),
        tools: { type: 'array', items: functionTool },
        tool_choice: toolChoice,
        parallel_tool_calls: nullable({ type: 'boolean' }),
        text: nullable({ type: 'object', additionalProperties: true, properties: { format: textFormat } }),
        max_output_tokens: nullable({ type: 'integer', minimum: 1 }),
        temperature: nullable({ type: 'number', minimum: 0, maximum: 2 }),
        top_p: nullable({ type: 'number', minimum: 0, maximum: 1 }),
        metadata: nullable(metadata),
        user: nullable({ type: 'string' }),
        safety_identifier: { type: 'string', description: 'Passed to providers as the chat `user` when `user` is absent.' },
        background: refused('the gateway has no background mode.'),
        conversation: refused('use previous_response_id.'),
        prompt: refused('stored prompt templates; send the prompt as input.'),
        modelgate: overridesSchema(overrides),
      },
    },
    ResponseOutputText: {
      type: 'object',
      required: ['type', 'text', 'annotations', 'logprobs'],
      properties: { type: { const: 'output_text' }, text: { type: 'string' }, annotations: { type: 'array', maxItems: 0 }, logprobs: { type: 'array' } },
    },
    ResponseRefusal: { type: 'object', required: ['type', 'refusal'], properties: { type: { const: 'refusal' }, refusal: { type: 'string' } } },
    ResponseOutputMessage: {
      type: 'object',
      required: ['id', 'type', 'role', 'content', 'status'],
      properties: {
        id: { type: 'string', pattern: '^msg_' },
        type: { const: 'message' },
        role: { const: 'assistant' },
        status: itemStatus,
        content: { type: 'array', items: { oneOf: [ref('ResponseOutputText'), ref('ResponseRefusal')] } },
      },
    },
    ResponseFunctionCall: {
      type: 'object',
      required: ['id', 'type', 'call_id', 'name', 'arguments', 'status'],
      properties: {
        id: { type: 'string', pattern: '^fc_' },
        type: { const: 'function_call' },
        status: itemStatus,
        call_id: { type: 'string', description: "The provider's id of the call: send it back in a function_call_output item." },
        name: { type: 'string' },
        arguments: { type: 'string', description: 'JSON text.' },
      },
    },
    ResponseOutputItem: {
      description: 'A message (text and refusal parts) or a function call. Reasoning items have no chat equivalent and are not kept, from any provider.',
      oneOf: [ref('ResponseOutputMessage'), ref('ResponseFunctionCall')],
    },
    ResponseUsage: {
      type: 'object',
      required: ['input_tokens', 'input_tokens_details', 'output_tokens', 'output_tokens_details', 'total_tokens'],
      properties: {
        input_tokens: count,
        input_tokens_details: { type: 'object', required: ['cached_tokens', 'cache_write_tokens'], properties: { cached_tokens: count, cache_write_tokens: count } },
        output_tokens: count,
        output_tokens_details: { type: 'object', required: ['reasoning_tokens'], properties: { reasoning_tokens: count } },
        total_tokens: count,
      },
    },
    Response: {
      type: 'object',
      description:
        "OpenAI's Response object, written by the gateway from whichever provider answered; request fields are echoed as OpenAI echoes them. `model` is the catalog id of the model that answered.",
      required: ['id', 'object', 'created_at', 'status', 'error', 'incomplete_details', 'instructions', 'model', 'tools', 'output', 'parallel_tool_calls', 'metadata', 'tool_choice', 'temperature', 'top_p', 'usage'],
      properties: {
        id: { type: 'string', pattern: '^resp_[0-9a-f]{32}$' },
        object: { const: 'response' },
        created_at: { type: 'integer', description: 'Unix seconds.' },
        status: { type: 'string', enum: ['completed', 'incomplete', 'in_progress', 'failed'], description: 'in_progress only in the stream’s first events; failed only in response.failed.' },
        background: { const: false },
        completed_at: nullable({ type: 'integer' }),
        error: nullable({ type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } }),
        incomplete_details: nullable({ type: 'object', required: ['reason'], properties: { reason: { type: 'string', enum: ['max_output_tokens', 'content_filter'] } } }),
        instructions: nullable({ type: 'string' }),
        max_output_tokens: nullable({ type: 'integer' }),
        max_tool_calls: { type: 'null' },
        model: { type: 'string' },
        output: { type: 'array', items: ref('ResponseOutputItem') },
        parallel_tool_calls: { type: 'boolean' },
        previous_response_id: nullable({ type: 'string' }),
        reasoning: { type: 'object', properties: { effort: { type: 'null' }, summary: { type: 'null' } } },
        service_tier: { type: 'string' },
        store: { type: 'boolean' },
        temperature: { type: 'number' },
        text: { type: 'object', required: ['format'], properties: { format: textFormat } },
        tool_choice: toolChoice,
        tools: { type: 'array', items: functionTool },
        top_p: { type: 'number' },
        truncation: { const: 'disabled' },
        usage: nullable(ref('ResponseUsage')),
        user: nullable({ type: 'string' }),
        metadata: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
    ResponseStreamEvent: responseStreamEvent,
    DeletedResponse: {
      type: 'object',
      required: ['id', 'object', 'deleted'],
      properties: { id: { type: 'string' }, object: { const: 'response' }, deleted: { const: true } },
    },
  } as const satisfies Record<string, Schema>;
}
