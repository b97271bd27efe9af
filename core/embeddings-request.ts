// POST /v1/embeddings, read: OpenAI's request checked field by field (a bad one is a 400 naming it)
// within OpenAI's own bounds — at most 2048 inputs, none empty, token ids as non-negative integers
// — and the prompt tokens it will be billed for estimated (each text counted, token ids as they are).
import { GatewayError } from './errors.js';
import { MAX_MODEL_NAME_LENGTH } from './chat-request.js';
import { estimateTextTokens } from './tokens.js';
import { inputsOf, type EmbeddingsRequest } from './embeddings-types.js';

/** OpenAI's limit on inputs per request. */
export const MAX_EMBEDDING_INPUTS = 2048;

function bad(param: string, message: string): GatewayError {
  return new GatewayError('bad_request', { param, message });
}

const isTokens = (value: unknown): value is number[] =>
  Array.isArray(value) && value.length > 0 && value.every((token) => Number.isInteger(token) && (token as number) >= 0);

export function readEmbeddingsRequest(body: unknown): EmbeddingsRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad('', 'The request body must be a JSON object.');
  const request = body as Record<string, unknown>;
  const { model, input, dimensions, encoding_format: encoding, user } = request;
  if (typeof model !== 'string' || model.length === 0 || model.length > MAX_MODEL_NAME_LENGTH) {
    throw bad('model', `'model' must be a non-empty string of at most ${MAX_MODEL_NAME_LENGTH} characters.`);
  }
  const shape = "'input' must be a non-empty string, a list of non-empty strings, a list of token ids, or a list of such lists";
  if (typeof input === 'string') {
    if (input === '') throw bad('input', `${shape}.`);
  } else if (Array.isArray(input)) {
    if (input.length === 0) throw bad('input', `${shape}.`);
    if (input.length > MAX_EMBEDDING_INPUTS) throw bad('input', `'input' holds at most ${MAX_EMBEDDING_INPUTS} inputs.`);
    if (!isTokens(input)) {
      input.forEach((entry, i) => {
        if (!(typeof entry === 'string' && entry !== '') && !isTokens(entry)) throw bad(`input[${i}]`, `${shape}.`);
      });
    }
  } else {
    throw bad('input', `${shape}.`);
  }
  if (dimensions !== undefined && dimensions !== null && (!Number.isInteger(dimensions) || (dimensions as number) < 1 || (dimensions as number) > 65536)) {
    throw bad('dimensions', "'dimensions' must be a positive integer.");
  }
  if (encoding !== undefined && encoding !== null && encoding !== 'float' && encoding !== 'base64') throw bad('encoding_format', "'encoding_format' must be float or base64.");
  if (user !== undefined && user !== null && typeof user !== 'string') throw bad('user', "'user' must be a string.");
  return request as EmbeddingsRequest;
}

/** Prompt tokens the inputs will be billed, estimated (an upper bound for text, exact for token ids). */
export function embeddingTokens(request: EmbeddingsRequest): number {
  let tokens = 0;
  for (const input of inputsOf(request)) tokens += typeof input === 'string' ? estimateTextTokens(input) : input.length;
  return tokens;
}

/** A float vector as OpenAI's base64: the float32 values, little-endian. */
export function base64Vector(vector: readonly number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i]!, i * 4);
  return bytes.toString('base64');
}
