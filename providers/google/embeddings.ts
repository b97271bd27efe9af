// OpenAI embeddings request → Gemini API POST /v1beta/models/{model}:batchEmbedContents: one
// EmbedContentRequest per text (the model named again inside each, as the API requires), `dimensions`
// as `outputDimensionality`. Gemini returns float values only, in request order, and reports no token
// usage, so the usage is the gateway's estimate. `user` has no equivalent and is dropped; token ids
// are refused; no task type is set (Gemini's default).
import type { EmbeddingsRequest, EmbeddingsResponse } from '../../core/embeddings-types.js';
import type { TranslateContext } from '../../core/provider.js';
import { badResponse } from '../../core/upstream-error.js';
import { checkedVectors, embeddingsList, textInputs, usageOf } from '../shared/embeddings.js';
import { isObject } from '../shared/json-object.js';

const PROVIDER = 'google';

export function batchEmbedBody(request: EmbeddingsRequest, context: TranslateContext): Record<string, unknown> {
  const model = `models/${context.model.native_id.replace(/^models\//, '')}`;
  return {
    requests: textInputs(request, PROVIDER).map((text) => ({
      model,
      content: { parts: [{ text }] },
      ...(request.dimensions != null ? { outputDimensionality: request.dimensions } : {}),
    })),
  };
}

export function geminiEmbeddings(body: unknown, context: TranslateContext & { inputs: number; estimatedTokens: number }): EmbeddingsResponse {
  if (!isObject(body) || !Array.isArray(body.embeddings)) throw badResponse(PROVIDER, 'response has no embeddings');
  const values = body.embeddings.map((item) => (isObject(item) ? item.values : undefined));
  const vectors = checkedVectors(PROVIDER, values, context.inputs);
  return embeddingsList(context.model.native_id, vectors, usageOf(undefined, context.estimatedTokens));
}
