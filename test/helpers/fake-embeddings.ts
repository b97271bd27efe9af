// Embedding endpoints for the fake providers, in each native shape: OpenAI and Mistral POST
// /v1/embeddings, Cohere POST /v2/embed, Gemini POST /v1beta/models/{m}:batchEmbedContents (and
// :embedContent). Vectors are a pure function of the text and the dimensions (fakeVector), the same
// at every provider, so a test knows the answer; each value is an exact float32, so a base64 answer
// decodes to exactly the float one. Any other request goes to the provider's chat fake.
import { FakeProvider, json, type RecordedRequest, type Responder } from './fake-provider.js';
import { PROVIDER_KEYS, cohereResponder, geminiResponder, mistralResponder, openAIResponder } from './fakes.js';

export type EmbeddingProvider = 'openai' | 'cohere' | 'google' | 'mistral';

/** The vector every fake answers for `text` at `dimensions`: values k/1024, |k| ≤ 1000. */
export function fakeVector(text: string, dimensions: number): number[] {
  let hash = 2166136261;
  for (const char of text) hash = Math.imul(hash ^ char.codePointAt(0)!, 16777619) >>> 0;
  return Array.from({ length: dimensions }, (_, index) => ((((hash + index * 7919) % 2001) + 2001) % 2001 - 1000) / 1024);
}

/** What a fake counts as tokens: one per four characters, at least one. */
export function fakeTokens(texts: string[]): number {
  return texts.reduce((sum, text) => sum + Math.max(1, Math.ceil(text.length / 4)), 0);
}

const DEFAULT_DIMENSIONS: Record<EmbeddingProvider, number> = { openai: 1536, cohere: 1536, google: 3072, mistral: 1024 };

function base64Of(vector: number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, index) => bytes.writeFloatLE(value, index * 4));
  return bytes.toString('base64');
}

function textsOf(input: unknown): string[] | undefined {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.every((item) => typeof item === 'string')) return input;
  return undefined;
}

function openAIEmbeddings(request: RecordedRequest): Responder {
  const body = request.json ?? {};
  const texts = textsOf(body.input);
  if (!texts || texts.length === 0 || texts.some((text) => text === '')) {
    const message = "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.";
    return json(400, { error: { message, type: 'invalid_request_error', param: null, code: null } });
  }
  const dimensions = body.dimensions ?? DEFAULT_DIMENSIONS.openai;
  const data = texts.map((text, index) => {
    const vector = fakeVector(text, dimensions);
    return { object: 'embedding', index, embedding: body.encoding_format === 'base64' ? base64Of(vector) : vector };
  });
  const tokens = fakeTokens(texts);
  return json(200, { object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
}

function mistralEmbeddings(request: RecordedRequest): Responder {
  const body = request.json ?? {};
  const texts = textsOf(body.input) ?? [];
  const dimensions = body.output_dimension ?? DEFAULT_DIMENSIONS.mistral;
  const data = texts.map((text, index) => ({ object: 'embedding', embedding: fakeVector(text, dimensions), index }));
  const tokens = fakeTokens(texts);
  return json(200, { id: 'embd-fake', object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens, completion_tokens: 0 } });
}

function cohereEmbeddings(request: RecordedRequest): Responder {
  const body = request.json ?? {};
  const texts: string[] = body.texts ?? [];
  if (!body.input_type) return json(400, { message: 'invalid request: input_type is required for embed-v4.0 and later models' });
  const dimensions = body.output_dimension ?? DEFAULT_DIMENSIONS.cohere;
  return json(200, {
    id: 'f5aa3e7b-f011-4c5c-a825-f94669f760e5',
    texts,
    embeddings: { float: texts.map((text) => fakeVector(text, dimensions)) },
    meta: { api_version: { version: '2' }, billed_units: { input_tokens: fakeTokens(texts) } },
    response_type: 'embeddings_by_type',
  });
}

function geminiEmbeddings(request: RecordedRequest, batch: boolean): Responder {
  const body = request.json ?? {};
  const requests: Array<{ content?: { parts?: Array<{ text?: string }> }; outputDimensionality?: number }> = batch ? (body.requests ?? []) : [body];
  const embeddings = requests.map((one) => ({
    values: fakeVector((one.content?.parts ?? []).map((part) => part.text ?? '').join(''), one.outputDimensionality ?? DEFAULT_DIMENSIONS.google),
  }));
  return json(200, batch ? { embeddings } : { embedding: embeddings[0] });
}

/** The embeddings route of `provider`, or undefined when `request` is for another path. */
function embeddingsRoute(provider: EmbeddingProvider, request: RecordedRequest): Responder | undefined {
  if (request.method !== 'POST') return undefined;
  if (provider === 'openai' && request.url === '/v1/embeddings') return openAIEmbeddings(request);
  if (provider === 'mistral' && request.url === '/v1/embeddings') return mistralEmbeddings(request);
  if (provider === 'cohere' && request.url === '/v2/embed') return cohereEmbeddings(request);
  const gemini = /^\/v1beta\/models\/[^:/?]+:(batchEmbedContents|embedContent)$/.exec(request.url);
  if (provider === 'google' && gemini) return geminiEmbeddings(request, gemini[1] === 'batchEmbedContents');
  return undefined;
}

const CHAT: Record<EmbeddingProvider, () => Responder> = {
  openai: () => openAIResponder(),
  cohere: () => cohereResponder(),
  google: () => geminiResponder(),
  mistral: () => mistralResponder(),
};

function authorised(provider: EmbeddingProvider, request: RecordedRequest): boolean {
  if (provider === 'google') return request.headers['x-goog-api-key'] === PROVIDER_KEYS.google;
  return request.headers.authorization === `Bearer ${PROVIDER_KEYS[provider]}`;
}

/** A fake of `provider` that serves embeddings beside its chat fixtures. */
export function startFakeWithEmbeddings(provider: EmbeddingProvider): Promise<FakeProvider> {
  const chat = CHAT[provider]();
  return FakeProvider.start((request, res) => {
    const route = authorised(provider, request) ? embeddingsRoute(provider, request) : undefined;
    return (route ?? chat)(request, res);
  });
}
