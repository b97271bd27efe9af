// Chat completion schemas. The request is the schema the gateway validates bodies with
// (core/chat-request.ts), so the description cannot drift from what is accepted; its `modelgate`
// object is built from the overrides the plugins declare. Completions and chunks follow OpenAI's
// contract (core/chat-types.ts); fields a provider adds pass through, so those objects stay open.
import { chatRequestSchema } from '../../chat-request.js';
import type { OverrideSpec } from '../../overrides.js';
import type { Schema } from '../types.js';

const nullable = (type: string) => ({ type: [type, 'null'] });
const count = { type: 'integer', minimum: 0 };
const finishReason = { type: 'string', enum: ['stop', 'length', 'tool_calls', 'content_filter', 'function_call'] };
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The body's `modelgate` object: one object per plugin override, removed before forwarding. */
export function overridesSchema(overrides: readonly OverrideSpec[]): Schema {
  return {
    type: 'object',
    description: "The gateway's own per-request settings, removed before the request is forwarded. Each may also be sent as a header (see the operation's parameters); the body wins.",
    additionalProperties: false,
    properties: Object.fromEntries(overrides.map((spec) => [spec.name, { type: 'object', additionalProperties: false, properties: spec.fields }])),
  };
}

export function chatSchemas(overrides: readonly OverrideSpec[]) {
  return {
    ChatCompletionRequest: {
      ...chatRequestSchema,
      description:
        "OpenAI's chat completion request. Fields not listed here are passed to providers that accept them and dropped or refused (400) by the rules of those that do not.",
      properties: { ...chatRequestSchema.properties, modelgate: overridesSchema(overrides) },
    },
    ToolCall: {
      type: 'object',
      required: ['id', 'type', 'function'],
      properties: {
        id: { type: 'string' },
        type: { const: 'function' },
        function: { type: 'object', required: ['name', 'arguments'], properties: { name: { type: 'string' }, arguments: { type: 'string', description: 'JSON text.' } } },
      },
    },
    CompletionUsage: {
      type: 'object',
      additionalProperties: true,
      required: ['prompt_tokens', 'completion_tokens', 'total_tokens'],
      properties: {
        prompt_tokens: count,
        completion_tokens: count,
        total_tokens: count,
        prompt_tokens_details: {
          ...nullable('object'),
          additionalProperties: true,
          properties: {
            cached_tokens: { ...count, description: 'Prompt tokens read from the provider’s prompt cache (billed at its cached price).' },
            cache_write_tokens: { ...count, description: 'Prompt tokens written to the provider’s prompt cache (billed at its write price); a gateway field, from providers that report it.' },
          },
        },
        completion_tokens_details: { ...nullable('object'), additionalProperties: true, properties: { reasoning_tokens: count } },
      },
    },
    ChatCompletion: {
      type: 'object',
      description: "OpenAI's chat completion. Fields a provider adds (service_tier, system_fingerprint, …) are kept.",
      additionalProperties: true,
      required: ['id', 'object', 'created', 'model', 'choices'],
      properties: {
        id: { type: 'string' },
        object: { const: 'chat.completion' },
        created: { type: 'integer', description: 'Unix seconds.' },
        model: { type: 'string', description: "The model as the provider named it (x-modelgate-model has the catalog's id)." },
        choices: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: true,
            required: ['index', 'message', 'logprobs', 'finish_reason'],
            properties: {
              index: count,
              message: {
                type: 'object',
                additionalProperties: true,
                required: ['role', 'content', 'refusal'],
                properties: { role: { const: 'assistant' }, content: nullable('string'), refusal: nullable('string'), tool_calls: { type: 'array', items: ref('ToolCall') } },
              },
              logprobs: { description: "The provider's log probabilities, or null." },
              finish_reason: finishReason,
            },
          },
        },
        usage: ref('CompletionUsage'),
      },
    },
    ChatCompletionChunk: {
      type: 'object',
      description: "One event of a stream, OpenAI's chunk. The first carries `role`; with `stream_options.include_usage` the last has no choices and the usage.",
      additionalProperties: true,
      required: ['id', 'object', 'created', 'model', 'choices'],
      properties: {
        id: { type: 'string' },
        object: { const: 'chat.completion.chunk' },
        created: { type: 'integer' },
        model: { type: 'string' },
        choices: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: true,
            required: ['index', 'delta', 'finish_reason'],
            properties: {
              index: count,
              delta: {
                type: 'object',
                additionalProperties: true,
                properties: {
                  role: { const: 'assistant' },
                  content: nullable('string'),
                  refusal: nullable('string'),
                  tool_calls: {
                    type: 'array',
                    items: {
                      type: 'object',
                      required: ['index'],
                      properties: {
                        index: count,
                        id: { type: 'string' },
                        type: { const: 'function' },
                        function: { type: 'object', properties: { name: { type: 'string' }, arguments: { type: 'string' } } },
                      },
                    },
                  },
                },
              },
              logprobs: { description: "The provider's log probabilities, or null." },
              finish_reason: { anyOf: [finishReason, { type: 'null' }] },
            },
          },
        },
        usage: { anyOf: [ref('CompletionUsage'), { type: 'null' }] },
      },
    },
  } as const satisfies Record<string, Schema>;
}
