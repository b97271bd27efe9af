// POST /v1/embeddings runs the pipeline as chat completions do (same override headers, same
// refusals), routed among embedding models only; it never streams and never fails over to another
// model (vectors of two models do not compare).
import type { OverrideSpec } from '../../overrides.js';
import { keyedRefusal } from '../responses.js';
import type { PathItem } from '../types.js';
import { OUTCOME_HEADERS, pipelineParameters, pipelineRefusals } from './chat.js';

export function embeddingsPaths(overrides: readonly OverrideSpec[]): Record<string, PathItem> {
  return {
    '/v1/embeddings': {
      post: {
        operationId: 'createEmbedding',
        tags: ['Embeddings'],
        summary: 'Create embeddings',
        description:
          "OpenAI's embeddings on any provider that offers them (translated to its native API), with the rate and cost limits and the response cache. Routing picks among embedding models only; a failure is retried on the same model, never another. `encoding_format: base64` is written by the gateway.",
        parameters: pipelineParameters(overrides),
        requestBody: { description: 'At most MODELGATE_MAX_BODY_SIZE MB.', required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/EmbeddingsRequest' } } } },
        responses: {
          '200': {
            description: 'One vector per input.',
            headers: OUTCOME_HEADERS,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/EmbeddingsResponse' } } },
          },
          ...pipelineRefusals({
            '400': keyedRefusal(
              "The body is not JSON (code invalid_json) or nests too deeply (code json_too_deep); a field is invalid (code invalid_request, `param` names it: an empty input, more than 2048 inputs, a bad dimensions or encoding_format); the model is a chat model or no embedding model fits; or the provider cannot express the request (e.g. token ids). A provider's own 400 is passed back as is.",
            ),
          }),
        },
      },
    },
  };
}
