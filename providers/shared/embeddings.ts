// What every embeddings adapter needs: the inputs as texts (token ids are OpenAI's own; a native
// provider cannot take them, so they are refused with a 400 naming `input`), each vector checked to
// be a list of finite numbers, one per input, and the answer in OpenAI's list shape with usage
// from the provider when it reports some, else the gateway's estimate.
import { inputsOf, type EmbeddingsRequest, type EmbeddingsResponse, type EmbeddingsUsage } from '../../core/embeddings-types.js';
import { badResponse } from '../../core/upstream-error.js';
import { isObject } from './json-object.js';
import { isCount } from './native-response.js';
import { invalidValue } from './openai-request.js';

/** The inputs as texts; token-id inputs refused, since only OpenAI-compatible servers read them. */
export function textInputs(request: EmbeddingsRequest, provider: string): string[] {
  const inputs = inputsOf(request);
  if (inputs.some((input) => typeof input !== 'string')) {
    throw invalidValue('input', `${provider} embeds text only; token ids are taken by OpenAI-compatible providers`);
  }
  return inputs as string[];
}

/** A provider's vectors, checked: one list of finite numbers per input. */
export function checkedVectors(provider: string, vectors: unknown, inputs: number): number[][] {
  if (!Array.isArray(vectors)) throw badResponse(provider, 'response has no embeddings');
  if (vectors.length !== inputs) throw badResponse(provider, `${vectors.length} embeddings for ${inputs} inputs`);
  vectors.forEach((vector, i) => {
    if (!Array.isArray(vector) || vector.length === 0 || !vector.every((value) => typeof value === 'number' && Number.isFinite(value))) {
      throw badResponse(provider, `embedding ${i} is not a list of numbers`);
    }
  });
  return vectors as number[][];
}

/** OpenAI's answer: the vectors in input order, and the usage reported (or, failing that, estimated). */
export function embeddingsList(model: string, vectors: number[][], usage: EmbeddingsUsage): EmbeddingsResponse {
  return {
    object: 'list',
    data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
    model,
    usage,
  };
}

/** Usage from a count the provider reported, or the estimate when it reported none. */
export function usageOf(reported: unknown, estimatedTokens: number): EmbeddingsUsage {
  const tokens = isCount(reported) ? reported : estimatedTokens;
  return { prompt_tokens: tokens, total_tokens: tokens };
}

/**
 * An OpenAI-shaped list (OpenAI, compatible servers, Mistral) read defensively: `data` items may
 * come in any order and are put back in input order by `index`; each index must appear once.
 */
export function openAIShapedEmbeddings(
  provider: string,
  body: unknown,
  context: { model: { native_id: string }; inputs: number; estimatedTokens: number },
): EmbeddingsResponse {
  if (!isObject(body) || !Array.isArray(body.data)) throw badResponse(provider, 'response has no data list');
  const data: unknown[] = body.data;
  const ordered: unknown[] = new Array(data.length);
  data.forEach((item, position) => {
    if (!isObject(item)) throw badResponse(provider, `data[${position}] is not an object`);
    const index = item.index === undefined ? position : item.index;
    if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= data.length || ordered[index as number] !== undefined) {
      throw badResponse(provider, `data[${position}] has a missing or repeated index`);
    }
    ordered[index as number] = item.embedding;
  });
  const vectors = checkedVectors(provider, ordered, context.inputs);
  const usage = isObject(body.usage) ? body.usage : {};
  const model = typeof body.model === 'string' && body.model !== '' ? body.model : context.model.native_id;
  const reported = usageOf(usage.prompt_tokens, context.estimatedTokens);
  const total = isCount(usage.prompt_tokens) && isCount(usage.total_tokens) ? usage.total_tokens : reported.total_tokens;
  return embeddingsList(model, vectors, { ...reported, total_tokens: total });
}
