// Cohere v2 chat (POST {COHERE_BASE_URL}/v2/chat, Bearer COHERE_API_KEY): request, response and
// stream translation live beside this file; here are the settings, the upstream request and the
// error mapping. Cohere's 498 (invalid token) counts as bad credentials, like 401: the gateway's
// key is at fault, never the client's. Rules and sources: docs/providers/cohere.md.
import type { IncomingHttpHeaders } from 'node:http';
import { defineSettings, type SettingsOf } from '../../core/settings.js';
import { UpstreamError, credentialsRejected, parseRetryAfter, statusPolicy } from '../../core/upstream-error.js';
import { isObject } from '../json-object.js';
import type { Provider, ProviderModule } from '../types.js';
import { cohereBody } from './request.js';
import { CohereStream, cohereCompletion } from './response.js';

const settings = defineSettings({
  COHERE_API_KEY: { type: 'string', secret: true, description: 'Cohere API key, sent as a Bearer token. Without it the cohere provider is not configured.' },
  COHERE_BASE_URL: {
    type: 'string',
    default: 'https://api.cohere.com',
    pattern: '^https?://',
    hint: 'be an http(s) URL',
    description: 'Cohere API base URL without a version path (the adapter appends /v2/chat): a regional endpoint or an egress proxy.',
  },
});

export const cohere: ProviderModule<typeof settings> = {
  name: 'cohere',
  settings,
  create(values): Provider {
    const s = values as SettingsOf<typeof settings>;
    const base = s.COHERE_BASE_URL.replace(/\/+$/, '');
    const headers = (accept: string): Record<string, string> => ({
      'content-type': 'application/json',
      accept,
      ...(s.COHERE_API_KEY ? { authorization: `Bearer ${s.COHERE_API_KEY}` } : {}),
    });
    return {
      name: 'cohere',
      configured: s.COHERE_API_KEY !== undefined,
      baseUrl: base,
      chatRequest: (request, context) => ({
        url: `${base}/v2/chat`,
        method: 'POST',
        headers: headers(context.stream ? 'text/event-stream' : 'application/json'),
        body: JSON.stringify(cohereBody(request, context)),
      }),
      chatResponse: cohereCompletion,
      streamTranslator: (context) => new CohereStream(context),
      error: cohereError,
      // The model list (GET /v1/models) costs nothing and proves both the key and the endpoint.
      testRequest: () => ({ url: `${base}/v1/models?endpoint=chat&page_size=1`, method: 'GET', headers: headers('application/json') }),
    };
  },
};

/** Cohere's error body is `{"message": …}` (sometimes with an `id`), through the common status policy. */
export function cohereError(status: number, headers: IncomingHttpHeaders, text: string): UpstreamError {
  let message: string | undefined;
  try {
    const body: unknown = JSON.parse(text);
    if (isObject(body) && typeof body.message === 'string') message = body.message;
  } catch {
    // not JSON: the status alone says what happened
  }
  const retryAfterMs = parseRetryAfter(headers);
  if (status === 401 || status === 403 || status === 498) return credentialsRejected('cohere', { status, detail: message, settings: 'COHERE_API_KEY', retryAfterMs });
  const policy = statusPolicy(status);
  return new UpstreamError({
    provider: 'cohere',
    reason: 'http_status',
    upstreamStatus: status,
    retryable: policy.retryable,
    retryAfterMs,
    status: policy.status,
    message: message ?? `The cohere provider answered HTTP ${status}`,
    code: status === 429 ? 'rate_limit_exceeded' : null,
  });
}
