// Embeddings schemas (POST /v1/embeddings): OpenAI's request within OpenAI's bounds, as
// core/embeddings-request.ts checks it, and OpenAI's answer. Adapters always return float vectors;
// the gateway writes base64 itself when asked (float32 little-endian), so either encoding is served
// from the same cached answer.
import type { OverrideSpec } from '../../overrides.js';
import { MAX_EMBEDDING_INPUTS } from '../../embeddings-request.js';
import type { Schema } from '../types.js';
import { overridesSchema } from './chat.js';

const count = { type: 'integer', minimum: 0 };
const tokenIds = { type: 'array', minItems: 1, items: count };

export function embeddingsSchemas(overrides: readonly OverrideSpec[]) {
  return {
    EmbeddingsRequest: {
      type: 'object',
      description:
        "OpenAI's embeddings request. Fields not listed are passed to providers that accept them (e.g. Cohere's `input_type`). Token ids reach OpenAI-compatible servers only; other providers refuse them (400).",
      required: ['model', 'input'],
      additionalProperties: true,
      properties: {
        model: { type: 'string', minLength: 1, maxLength: 256, description: 'An embedding model of the catalog, or `provider/model`; routing never picks a chat model here, and never fails over to another model.' },
        input: {
          description: `A non-empty string, a list of them, a list of token ids, or a list of such lists: at most ${MAX_EMBEDDING_INPUTS} inputs.`,
          anyOf: [
            { type: 'string', minLength: 1 },
            { type: 'array', minItems: 1, maxItems: MAX_EMBEDDING_INPUTS, items: { type: 'string', minLength: 1 } },
            tokenIds,
            { type: 'array', minItems: 1, maxItems: MAX_EMBEDDING_INPUTS, items: tokenIds },
          ],
        },
        dimensions: { type: ['integer', 'null'], minimum: 1, maximum: 65536, description: "Vector length, for models that can shorten theirs." },
        encoding_format: { type: ['string', 'null'], enum: ['float', 'base64', null], description: '`base64`: each vector as base64 of its float32 values, little-endian (default float).' },
        user: { type: ['string', 'null'] },
        modelgate: overridesSchema(overrides),
      },
    },
    Embedding: {
      type: 'object',
      required: ['object', 'index', 'embedding'],
      properties: {
        object: { const: 'embedding' },
        index: { ...count, description: "The input's position in `input`." },
        embedding: {
          description: 'The vector: numbers, or with `encoding_format: base64` the base64 of its float32 values, little-endian.',
          anyOf: [{ type: 'array', items: { type: 'number' } }, { type: 'string', contentEncoding: 'base64' }],
        },
      },
    },
    EmbeddingsResponse: {
      type: 'object',
      description: "OpenAI's embeddings answer, one vector per input in input order, whichever provider answered.",
      required: ['object', 'data', 'model', 'usage'],
      properties: {
        object: { const: 'list' },
        data: { type: 'array', items: { $ref: '#/components/schemas/Embedding' } },
        model: { type: 'string', description: "The model as the provider named it (x-modelgate-model has the catalog's id)." },
        usage: { type: 'object', required: ['prompt_tokens', 'total_tokens'], properties: { prompt_tokens: count, total_tokens: count } },
      },
    },
  } as const satisfies Record<string, Schema>;
}
