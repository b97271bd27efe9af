// OpenAI embeddings request → Cohere POST /v2/embed: the texts, float vectors asked for
// (`embedding_types: ["float"]`), `dimensions` as `output_dimension` (embed-v4.0 takes it). Cohere
// requires an `input_type`, which OpenAI has no field for: a client may send Cohere's own
// `input_type` (search_document, search_query, classification, clustering) beside the OpenAI
// fields; without one it is `search_document`, the type for texts stored to be searched. `user` has
// no equivalent and is dropped; token ids are refused. Usage is `meta.billed_units.input_tokens`.
import type { EmbeddingsRequest, EmbeddingsResponse } from '../../core/embeddings-types.js';
import type { TranslateContext } from '../../core/provider.js';
import { badResponse } from '../../core/upstream-error.js';
import { checkedVectors, embeddingsList, textInputs, usageOf } from '../shared/embeddings.js';
import { isObject } from '../shared/json-object.js';

const PROVIDER = 'cohere';
export const DEFAULT_INPUT_TYPE = 'search_document';

export function cohereEmbedBody(request: EmbeddingsRequest, context: TranslateContext): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: context.model.native_id,
    texts: textInputs(request, PROVIDER),
    input_type: typeof request.input_type === 'string' ? request.input_type : DEFAULT_INPUT_TYPE,
    embedding_types: ['float'],
  };
  if (request.dimensions != null) body.output_dimension = request.dimensions;
  return body;
}

export function cohereEmbeddings(body: unknown, context: TranslateContext & { inputs: number; estimatedTokens: number }): EmbeddingsResponse {
  if (!isObject(body) || !isObject(body.embeddings)) throw badResponse(PROVIDER, 'response has no embeddings');
  const vectors = checkedVectors(PROVIDER, body.embeddings.float, context.inputs);
  const billed = isObject(body.meta) && isObject(body.meta.billed_units) ? body.meta.billed_units.input_tokens : undefined;
  return embeddingsList(context.model.native_id, vectors, usageOf(billed, context.estimatedTokens));
}
