// OpenAI embeddings (POST {base}/embeddings) for `openai` and `custom`: the client's request passes
// through with the routed model and float vectors asked for (the gateway encodes base64 itself, so
// one cached answer serves either encoding); dimensions, user, token-id inputs and any field this
// gateway does not know reach the server unchanged. The answer is checked for the shape OpenAI promises.
import type { EmbeddingsRequest, EmbeddingsResponse } from '../../core/embeddings-types.js';
import type { TranslateContext } from '../../core/provider.js';
import { openAIShapedEmbeddings } from '../shared/embeddings.js';

export function compatibleEmbeddingsBody(request: EmbeddingsRequest, context: TranslateContext): EmbeddingsRequest {
  return { ...request, model: context.model.native_id, encoding_format: 'float' };
}

export function compatibleEmbeddings(
  provider: string,
  body: unknown,
  context: TranslateContext & { inputs: number; estimatedTokens: number },
): EmbeddingsResponse {
  return openAIShapedEmbeddings(provider, body, context);
}
