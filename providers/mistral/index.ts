// Mistral chat completions (POST {MISTRAL_BASE_URL}/v1/chat/completions, Bearer MISTRAL_API_KEY):
// settings, the upstream request and the error mapping; the request and answer translation live
// beside this file. Errors reuse the OpenAI-compatible reading, plus Mistral's 422 validation lists
// and its "capacity exceeded" overload. Rules and sources: docs/providers/mistral.md.
import type { IncomingHttpHeaders } from 'node:http';
import { defineSettings, type SettingsOf } from '../../core/settings.js';
import { UpstreamError, parseRetryAfter, statusPolicy } from '../../core/upstream-error.js';
import { openAIError } from '../openai-compatible.js';
import { isObject } from '../json-object.js';
import type { Provider, ProviderModule } from '../types.js';
import { mistralBody } from './request.js';
import { MistralStream, mistralCompletion } from './response.js';

const settings = defineSettings({
  MISTRAL_API_KEY: { type: 'string', secret: true, description: 'Mistral API key, sent as a Bearer token. Without it the mistral provider is not configured.' },
  MISTRAL_BASE_URL: {
    type: 'string',
    default: 'https://api.mistral.ai',
    pattern: '^https?://',
    hint: 'be an http(s) URL',
    description: 'Mistral API base URL without a version path (the adapter appends /v1/chat/completions): a regional endpoint or an egress proxy.',
  },
});

export const mistral: ProviderModule<typeof settings> = {
  name: 'mistral',
  settings,
  create(values): Provider {
    const s = values as SettingsOf<typeof settings>;
    const base = s.MISTRAL_BASE_URL.replace(/\/+$/, '');
    const headers = (accept: string): Record<string, string> => ({
      'content-type': 'application/json',
      accept,
      ...(s.MISTRAL_API_KEY ? { authorization: `Bearer ${s.MISTRAL_API_KEY}` } : {}),
    });
    return {
      name: 'mistral',
      configured: s.MISTRAL_API_KEY !== undefined,
      baseUrl: base,
      chatRequest: (request, context) => ({
        url: `${base}/v1/chat/completions`,
        method: 'POST',
        headers: headers(context.stream ? 'text/event-stream' : 'application/json'),
        body: JSON.stringify(mistralBody(request, context)),
      }),
      chatResponse: mistralCompletion,
      streamTranslator: (context) => new MistralStream(context),
      error: mistralError,
      testRequest: () => ({ url: `${base}/v1/models`, method: 'GET', headers: headers('application/json') }),
    };
  },
};

/**
 * Mistral answers errors in several shapes (`{"detail": "…"}`, legacy `{"message": …}`,
 * `{"object": "error", …}`), which the OpenAI-compatible reader already handles. Two need more:
 * a 422 lists validation problems under `detail`, and "Service tier capacity exceeded" is an
 * overload whatever status carries it (seen with 503 in litellm#25078, and with 400), so it is
 * retried or failed over like a 503 rather than blamed on the request.
 */
export function mistralError(status: number, headers: IncomingHttpHeaders, text: string): UpstreamError {
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed)) body = parsed;
  } catch {
    // not JSON: the status alone says what happened
  }
  const base = { provider: 'mistral', reason: 'http_status' as const, upstreamStatus: status, retryAfterMs: parseRetryAfter(headers) };
  if (Array.isArray(body.detail)) {
    const policy = statusPolicy(status);
    return new UpstreamError({ ...base, ...policy, message: `The mistral provider rejected the request: ${validationText(body.detail)}`, code: 'invalid_request' });
  }
  if (status !== 401 && status !== 403 && status !== 429 && typeof body.message === 'string' && /capacity exceeded/i.test(body.message)) {
    return new UpstreamError({ ...base, ...statusPolicy(503), message: body.message, type: 'service_unavailable_error', code: 'provider_overloaded' });
  }
  return openAIError('mistral', status, headers, text, 'MISTRAL_API_KEY');
}

/** `[{loc: ["body", "messages"], msg: "Field required"}]` → `messages: Field required`. */
function validationText(detail: unknown[]): string {
  return detail
    .map((item) => {
      if (!isObject(item)) return String(item);
      const loc = Array.isArray(item.loc) ? item.loc.filter((part) => part !== 'body').join('.') : '';
      const msg = typeof item.msg === 'string' ? item.msg : 'invalid';
      return loc ? `${loc}: ${msg}` : msg;
    })
    .join('; ');
}
