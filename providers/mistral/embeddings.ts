// OpenAI embeddings request → Mistral POST /v1/embeddings. Mistral rejects fields it does not know
// (422 extra_forbidden), so the body is built from an allow-list: the texts, `dimensions` as
// `output_dimension` (codestral-embed takes it; mistral-embed refuses it with Mistral's own 4xx),
// float vectors asked for. `user` has no equivalent and is dropped; token ids are refused. The answer
// is OpenAI-shaped (data[].embedding, usage.prompt_tokens).
import type { EmbeddingsRequest, EmbeddingsResponse } from '../../core/embeddings-types.js';
import type { TranslateContext } from '../../core/provider.js';
import { openAIShapedEmbeddings, textInputs } from '../shared/embeddings.js';

export function mistralEmbeddingsBody(request: EmbeddingsRequest, context: TranslateContext): Record<string, unknown> {
  const body: Record<string, unknown> = { model: context.model.native_id, input: textInputs(request, 'mistral') };
  if (request.dimensions != null) body.output_dimension = request.dimensions;
  body.output_dtype = 'float';
  body.encoding_format = 'float';
  return body;
}

export function mistralEmbeddings(body: unknown, context: TranslateContext & { inputs: number; estimatedTokens: number }): EmbeddingsResponse {
  return openAIShapedEmbeddings('mistral', body, context);
}
