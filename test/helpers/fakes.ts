// Fake providers that speak each native protocol as shared/protocol documents it: paths, auth
// headers, bodies and SSE framing, replaying the golden fixtures. A request with the wrong
// credentials gets the provider's own auth error fixture (Gemini's is a 400). Each also answers its
// embeddings endpoint: the recorded fixture for the fixture's texts, else deterministic vectors.
import { createHash } from 'node:crypto';
import { FakeProvider, fixture, fixtureJson, json, sse, type Responder, type RecordedRequest } from './fake-provider.js';

export const PROVIDER_KEYS = {
  openai: 'sk-test-openai-0123456789',
  anthropic: 'sk-ant-test-0123456789',
  google: 'AIzaTestGoogle0123456789',
  custom: 'sk-test-custom-0123456789',
  cohere: 'co-test-cohere-0123456789',
  mistral: 'mi-test-mistral-0123456789',
} as const;

/** OpenAI Chat Completions at /v1/chat/completions and /v1/models, Bearer auth. */
export function openAIResponder(key: string = PROVIDER_KEYS.openai): Responder {
  return (request, res) => {
    if (request.headers.authorization !== `Bearer ${key}`) return json(401, fixtureJson('openai/error-401.json'))(request, res);
    if (request.method === 'GET' && request.url === '/v1/models') return json(200, fixtureJson('openai/models.json'))(request, res);
    if (request.method === 'POST' && request.url === '/v1/embeddings') return openAIEmbeddings(request)(request, res);
    if (request.method !== 'POST' || request.url !== '/v1/chat/completions') return json(404, fixtureJson('openai/error-404.json'))(request, res);
    const tools = Array.isArray(request.json?.tools);
    if (request.json?.stream) return sse(fixture(tools ? 'openai/stream-tool-calls.sse' : 'openai/stream.sse'))(request, res);
    return json(200, fixtureJson(tools ? 'openai/chat-tool-calls.json' : 'openai/chat.json'))(request, res);
  };
}

export function startFakeOpenAI(key?: string): Promise<FakeProvider> {
  return FakeProvider.start(openAIResponder(key));
}

/** Fields Cohere's V2ChatRequest declares (cohere-typescript); Cohere answers any other with 400. */
const COHERE_FIELDS = new Set([
  'model', 'messages', 'tools', 'strict_tools', 'documents', 'citation_options', 'response_format', 'safety_mode', 'max_tokens',
  'stop_sequences', 'temperature', 'seed', 'frequency_penalty', 'presence_penalty', 'k', 'p', 'logprobs', 'tool_choice', 'thinking',
  'priority', 'stream',
]);

/**
 * Cohere v2 chat at POST /v2/chat and the model list at GET /v1/models, Bearer auth. A request that
 * offers tools gets the tool-call fixture until a tool result comes back, then the text answer;
 * streams are named events without a terminator, as in the fixtures.
 */
export function cohereResponder(key: string = PROVIDER_KEYS.cohere): Responder {
  return (request, res) => {
    if (request.headers.authorization !== `Bearer ${key}`) return json(401, fixtureJson('cohere/error-401.json'))(request, res);
    if (request.method === 'GET' && request.url.startsWith('/v1/models')) {
      return json(200, { models: [{ name: 'command-a-03-2025', endpoints: ['chat'], context_length: 256000 }] })(request, res);
    }
    if (request.method === 'POST' && request.url === '/v2/embed') return cohereEmbed(request)(request, res);
    if (request.method !== 'POST' || request.url !== '/v2/chat') return json(404, { message: `route ${request.url} not found` })(request, res);
    const unknown = Object.keys(request.json ?? {}).find((field) => !COHERE_FIELDS.has(field));
    if (unknown) return json(400, { message: `invalid request: unknown field: parameter ${unknown} is not a valid field` })(request, res);
    const callsTool = Array.isArray(request.json.tools) && request.json.messages?.at(-1)?.role !== 'tool';
    if (request.json.stream) return sse(fixture(callsTool ? 'cohere/stream-tool-call.sse' : 'cohere/stream.sse'))(request, res);
    return json(200, fixtureJson(callsTool ? 'cohere/chat-tool-call.json' : 'cohere/chat.json'))(request, res);
  };
}

export function startFakeCohere(key?: string): Promise<FakeProvider> {
  return FakeProvider.start(cohereResponder(key));
}

/** Fields Mistral's chat-completions request declares (providers.md §4); others get a 422. */
const MISTRAL_FIELDS = new Set([
  'model', 'messages', 'temperature', 'top_p', 'max_tokens', 'stream', 'stop', 'random_seed', 'response_format', 'tools', 'tool_choice',
  'presence_penalty', 'frequency_penalty', 'n', 'prediction', 'parallel_tool_calls', 'reasoning_effort', 'prompt_mode', 'guardrails',
  'prompt_cache_key', 'safe_prompt', 'metadata',
]);

/**
 * Mistral chat completions at POST /v1/chat/completions and GET /v1/models, Bearer auth. Unknown
 * body fields (stream_options among them) get Mistral's 422 validation body. Tool calls as in
 * cohereResponder; streams are data-only and end with `data: [DONE]`.
 */
export function mistralResponder(key: string = PROVIDER_KEYS.mistral): Responder {
  return (request, res) => {
    if (request.headers.authorization !== `Bearer ${key}`) return json(401, fixtureJson('mistral/error-401.json'))(request, res);
    if (request.method === 'GET' && request.url === '/v1/models') {
      return json(200, { object: 'list', data: [{ id: 'mistral-small-latest', object: 'model', created: 1769088720, owned_by: 'mistralai' }] })(request, res);
    }
    const embeddings = request.url === '/v1/embeddings';
    if (request.method !== 'POST' || (!embeddings && request.url !== '/v1/chat/completions')) return json(404, { detail: 'Not Found' })(request, res);
    const unknown = Object.keys(request.json ?? {}).filter((field) => !(embeddings ? MISTRAL_EMBEDDING_FIELDS : MISTRAL_FIELDS).has(field));
    if (unknown.length > 0) {
      const detail = unknown.map((field) => ({ type: 'extra_forbidden', loc: ['body', field], msg: 'Extra inputs are not permitted', input: request.json[field] }));
      return json(422, { detail })(request, res);
    }
    if (embeddings) return mistralEmbeddings(request)(request, res);
    const callsTool = Array.isArray(request.json.tools) && request.json.messages?.at(-1)?.role !== 'tool';
    if (request.json.stream) return sse(fixture(callsTool ? 'mistral/stream-tool-call.sse' : 'mistral/stream.sse'))(request, res);
    return json(200, fixtureJson(callsTool ? 'mistral/chat-tool-call.json' : 'mistral/chat.json'))(request, res);
  };
}

export function startFakeMistral(key?: string): Promise<FakeProvider> {
  return FakeProvider.start(mistralResponder(key));
}

/**
 * Anthropic Messages at /v1/messages and /v1/models: `x-api-key` (or, as SDK 1.x sends it,
 * `Authorization: Bearer`) and an `anthropic-version` header. Offered tools are called once; a
 * request that already carries the tool_result gets the text answer.
 */
export function anthropicResponder(key: string = PROVIDER_KEYS.anthropic): Responder {
  return (request, res) => {
    if (request.headers['x-api-key'] !== key && request.headers.authorization !== `Bearer ${key}`) return json(401, fixtureJson('anthropic/error-401.json'))(request, res);
    if (!request.headers['anthropic-version']) {
      return json(400, { type: 'error', error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' } })(request, res);
    }
    if (request.method === 'GET' && request.url.startsWith('/v1/models')) {
      const model = { type: 'model', id: 'claude-sonnet-4-5-20250929', display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z' };
      return json(200, { data: [model], has_more: false, first_id: model.id, last_id: model.id })(request, res);
    }
    if (request.method !== 'POST' || request.url !== '/v1/messages') return json(404, fixtureJson('anthropic/error-404.json'))(request, res);
    const messages: Array<{ content?: unknown }> = request.json?.messages ?? [];
    const last = messages.at(-1)?.content;
    const answered = Array.isArray(last) && last.some((block: { type?: string }) => block.type === 'tool_result');
    const callTool = Array.isArray(request.json?.tools) && !answered;
    if (request.json?.stream) return sse(fixture(callTool ? 'anthropic/stream-tool-use.sse' : 'anthropic/stream.sse'))(request, res);
    return json(200, fixtureJson(callTool ? 'anthropic/chat-tool-use.json' : 'anthropic/chat.json'))(request, res);
  };
}

export function startFakeAnthropic(key?: string): Promise<FakeProvider> {
  return FakeProvider.start(anthropicResponder(key));
}

/**
 * Gemini at /v1beta/models/{model}:generateContent and :streamGenerateContent?alt=sse (CRLF-framed
 * SSE as recorded; without alt=sse, one JSON array), `x-goog-api-key`; a wrong key gets Gemini's
 * 400 API_KEY_INVALID. Offered tools are called once; a request carrying the functionResponse gets
 * the text answer.
 */
export function geminiResponder(key: string = PROVIDER_KEYS.google): Responder {
  return (request, res) => {
    if (request.headers['x-goog-api-key'] !== key) return json(400, fixtureJson('gemini/error-400-invalid-api-key.json'))(request, res);
    if (request.method === 'GET' && /^\/v1beta\/models(\?|$)/.test(request.url)) {
      return json(200, { models: [{ name: 'models/gemini-2.5-flash', displayName: 'Gemini 2.5 Flash', supportedGenerationMethods: ['generateContent'] }] })(request, res);
    }
    const embed = /^\/v1beta\/models\/([^:/?]+):batchEmbedContents$/.exec(request.url);
    if (request.method === 'POST' && embed) return geminiBatchEmbed(embed[1]!, request)(request, res);
    const route = /^\/v1beta\/models\/([^:/?]+):(generateContent|streamGenerateContent)(\?alt=sse)?$/.exec(request.url);
    if (request.method !== 'POST' || !route) return json(404, fixtureJson('gemini/error-404.json'))(request, res);
    const contents: Array<{ parts?: Array<{ functionResponse?: unknown }> }> = request.json?.contents ?? [];
    const answered = contents.at(-1)?.parts?.some((part) => part.functionResponse) === true;
    const callTool = Array.isArray(request.json?.tools) && !answered;
    if (route[2] === 'generateContent') return json(200, fixtureJson(callTool ? 'gemini/chat-function-call.json' : 'gemini/chat.json'))(request, res);
    const transcript = fixture(callTool ? 'gemini/stream-function-call.sse' : 'gemini/stream.sse');
    if (route[3]) return sse(transcript)(request, res);
    const events = transcript.split('\r\n\r\n').filter((event) => event.startsWith('data: ')).map((event) => JSON.parse(event.slice(6)));
    return json(200, events)(request, res);
  };
}

export function startFakeGemini(key?: string): Promise<FakeProvider> {
  return FakeProvider.start(geminiResponder(key));
}

// --- Embeddings ---

/** Vector length when the request names none: short, so tests stay small. */
export const FAKE_DIMENSIONS = 8;

/** A deterministic unit vector for a text (or token ids), from a hash of it. */
export function fakeVector(input: unknown, dimensions: number = FAKE_DIMENSIONS): number[] {
  const digest = createHash('sha256').update(JSON.stringify(input)).digest();
  const raw = Array.from({ length: dimensions }, (_, i) => digest[i % digest.length]! / 255 - 0.5);
  const norm = Math.hypot(...raw) || 1;
  return raw.map((value) => value / norm);
}

/** About four characters a token, at least one a text; a token-id list counts its ids. */
export function fakeTokens(inputs: unknown[]): number {
  return inputs.reduce<number>((sum, input) => sum + (Array.isArray(input) ? input.length : Math.max(1, Math.ceil(String(input).length / 4))), 0);
}

function openAIInputs(input: unknown): unknown[] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.length > 0 && typeof input[0] === 'number') return [input];
  return Array.isArray(input) ? input : [];
}

const sameList = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** OpenAI POST /v1/embeddings: the fixture for the fixture's input, base64 when asked, 400 for no input. */
function openAIEmbeddings(request: RecordedRequest): Responder {
  const inputs = openAIInputs(request.json?.input);
  if (inputs.length === 0 || inputs.some((input) => input === '' || (Array.isArray(input) && input.length === 0))) {
    return json(400, fixtureJson('openai/error-400-embeddings.json'));
  }
  const base64 = request.json.encoding_format === 'base64';
  if (sameList(request.json.input, fixtureJson('openai/embeddings-request.json').input)) {
    return json(200, fixtureJson(base64 ? 'openai/embeddings-base64.json' : 'openai/embeddings.json'));
  }
  const dimensions = request.json.dimensions ?? FAKE_DIMENSIONS;
  const encode = (vector: number[]) => (base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector);
  const tokens = fakeTokens(inputs);
  return json(200, {
    object: 'list',
    data: inputs.map((input, index) => ({ object: 'embedding', index, embedding: encode(fakeVector(input, dimensions)) })),
    model: request.json.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}

/** Fields Cohere's v2 embed request declares (cohere-typescript EmbedRequestV2); others get a 400. */
const COHERE_EMBED_FIELDS = new Set(['model', 'texts', 'images', 'inputs', 'input_type', 'embedding_types', 'output_dimension', 'max_tokens', 'truncate', 'priority']);

/** Cohere POST /v2/embed: input_type required, as for every v3+ model; the fixture for its texts. */
function cohereEmbed(request: RecordedRequest): Responder {
  const unknown = Object.keys(request.json ?? {}).find((field) => !COHERE_EMBED_FIELDS.has(field));
  if (unknown) return json(400, { message: `invalid request: unknown field: parameter ${unknown} is not a valid field` });
  if (typeof request.json.input_type !== 'string') return json(400, { message: 'invalid request: input_type is required' });
  const texts: unknown[] = Array.isArray(request.json.texts) ? request.json.texts : [];
  if (texts.length === 0) return json(400, { message: 'invalid request: texts must not be empty' });
  if (sameList(texts, fixtureJson('cohere/embed-request.json').texts)) return json(200, fixtureJson('cohere/embed.json'));
  const dimensions = request.json.output_dimension ?? FAKE_DIMENSIONS;
  return json(200, {
    id: '5807ee2e-0cda-445a-9ec8-864c60a06606',
    texts,
    embeddings: { float: texts.map((text) => fakeVector(text, dimensions)) },
    meta: { api_version: { version: '2' }, billed_units: { input_tokens: fakeTokens(texts) } },
    response_type: 'embeddings_by_type',
  });
}

/** Fields Mistral's embeddings request declares; others get its 422. */
const MISTRAL_EMBEDDING_FIELDS = new Set(['model', 'input', 'output_dimension', 'output_dtype', 'encoding_format', 'metadata']);

/** Mistral POST /v1/embeddings: OpenAI's list shape, usage with completion_tokens 0. */
function mistralEmbeddings(request: RecordedRequest): Responder {
  const inputs = typeof request.json.input === 'string' ? [request.json.input] : Array.isArray(request.json.input) ? request.json.input : [];
  const dimensions = request.json.output_dimension ?? FAKE_DIMENSIONS;
  const tokens = fakeTokens(inputs);
  return json(200, {
    id: 'embd-aad6fc62b17349b192ef09225058bc45',
    object: 'list',
    data: inputs.map((input: unknown, index: number) => ({ object: 'embedding', embedding: fakeVector(input, dimensions), index })),
    model: request.json.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens, completion_tokens: 0 },
  });
}

/** Gemini POST …:batchEmbedContents: each request must name the model of the URL; values only, no usage. */
function geminiBatchEmbed(model: string, request: RecordedRequest): Responder {
  const requests: Array<{ model?: string; content?: { parts?: Array<{ text?: string }> }; outputDimensionality?: number }> = request.json?.requests ?? [];
  const wrong = requests.findIndex((item) => item.model !== `models/${model}`);
  if (requests.length === 0 || wrong >= 0) {
    const message = requests.length === 0 ? '* BatchEmbedContentsRequest.requests: must not be empty' : `* BatchEmbedContentsRequest.requests[${wrong}].model: model must match the batch model`;
    return json(400, { error: { code: 400, message, status: 'INVALID_ARGUMENT' } });
  }
  return json(200, {
    embeddings: requests.map((item) => ({ values: fakeVector(item.content?.parts?.map((part) => part.text ?? '').join('') ?? '', item.outputDimensionality ?? FAKE_DIMENSIONS) })),
  });
}
