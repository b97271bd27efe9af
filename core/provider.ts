// The adapter contract. A provider translates the OpenAI chat request to its native request and
// translates back: the response, the stream event by event (per-request state lives in the
// StreamTranslator), and errors. Adapters never see raw stream bytes, only parsed SSE events;
// core never knows a provider's name.
import type { IncomingHttpHeaders } from 'node:http';
import type { SettingsSchema } from './settings.js';
import type { SseEvent } from './sse.js';
import type { ChatChunk, ChatCompletion, ChatRequest, Usage } from './chat-types.js';
import type { UpstreamError } from './upstream-error.js';
import type { CatalogModel } from './catalog.js';
import type { EmbeddingsRequest, EmbeddingsResponse } from './embeddings-types.js';
import type { InputItem, ResponsesRequest } from './responses/types.js';

export interface UpstreamRequest {
  url: string;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string;
}

export interface TranslateContext {
  /** The catalog entry routed to; `model.native_id` is what the provider is asked for. */
  model: CatalogModel;
  stream: boolean;
  /** The gateway's request id, for ids the provider does not give (e.g. Gemini tool calls). */
  requestId: string;
}

export interface StreamTranslator {
  /**
   * One upstream event → the OpenAI chunks it means. Throws UpstreamError for an error event. A
   * chunk returned exactly as parsed may carry the event's text (core/chunk-text.ts); core never
   * changes a returned chunk in place.
   */
  event(event: SseEvent): ChatChunk[];
  /** The upstream closed the stream; any chunks still owed (e.g. the usage chunk). */
  end(): ChatChunk[];
  /** Cumulative usage reported so far, normalized to OpenAI's shape. */
  readonly usage: Usage | undefined;
  /** The provider said the answer is complete (finish reason, message_stop, [DONE]). */
  readonly finished: boolean;
}

/**
 * Completions an adapter's chatResponse returned exactly as parsed from the provider's body, with
 * nothing added, changed or removed. Core then writes the provider's own bytes to the client (and
 * the cache keeps them) instead of serializing the same object a second time.
 */
const asReceived = new WeakSet<ChatCompletion>();

/** Marks `completion` as the provider's body unchanged; returns it. */
export function receivedAsIs(completion: ChatCompletion): ChatCompletion {
  asReceived.add(completion);
  return completion;
}

export function isReceivedAsIs(completion: ChatCompletion): boolean {
  return asReceived.has(completion);
}

export interface Provider {
  readonly name: string;
  /** Credentials are present: the provider can serve traffic. */
  readonly configured: boolean;
  readonly baseUrl: string;
  /** Serves models the catalog does not list (`custom/<any-model>` is routed to it). */
  readonly acceptsUnlistedModels?: boolean;
  /** Throws GatewayError (400) for a parameter the provider cannot honour under our documented rules. */
  chatRequest(request: ChatRequest, context: TranslateContext): UpstreamRequest;
  /**
   * Throws UpstreamError (bad_response) when the body is not what the protocol promises. A body
   * returned unchanged may be marked with receivedAsIs: its bytes are then sent as they came.
   */
  chatResponse(body: unknown, context: TranslateContext): ChatCompletion;
  streamTranslator(context: TranslateContext): StreamTranslator;
  /**
   * Embeddings (POST /v1/embeddings), for providers that offer them. The native request asks for
   * float vectors; throws GatewayError (400) for an input the provider cannot take (token ids).
   */
  embeddingsRequest?(request: EmbeddingsRequest, context: TranslateContext): UpstreamRequest;
  /**
   * The native answer as OpenAI's list of float vectors, in input order; `estimatedTokens` is the
   * usage reported when the provider reports none. Throws UpstreamError (bad_response).
   */
  embeddingsResponse?(body: unknown, context: TranslateContext & { inputs: number; estimatedTokens: number }): EmbeddingsResponse;
  /**
   * A Responses API endpoint of the provider's own (OpenAI's /v1/responses): a POST /v1/responses
   * request routed here is sent there — `history` (the stored turns of previous_response_id) before
   * its input — instead of being translated to chat. The answer and the stream are read back into
   * the chat shapes every other step works with.
   */
  responsesRequest?(request: ResponsesRequest, history: readonly InputItem[], context: TranslateContext): UpstreamRequest;
  responsesResponse?(body: unknown, context: TranslateContext): ChatCompletion;
  responsesStreamTranslator?(context: TranslateContext): StreamTranslator;
  /** Normalizes an error status and body into an UpstreamError. */
  error(status: number, headers: IncomingHttpHeaders, body: string): UpstreamError;
  /** The cheapest real request that proves the credentials and the endpoint work (the model-list call). */
  testRequest(): UpstreamRequest;
}

export interface ProviderModule<S extends SettingsSchema = SettingsSchema> {
  readonly name: string;
  /** The setting whose presence makes the provider serve traffic (named when none is configured). */
  readonly configuredBy: string;
  readonly settings: S;
  create(settings: Readonly<Record<string, unknown>>): Provider;
  /** Models this provider serves that the catalog does not list (e.g. CUSTOM_MODELS). */
  extraModels?(settings: Readonly<Record<string, unknown>>): string[];
}
