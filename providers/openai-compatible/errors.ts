// OpenAI's error body, from the HTTP status or inside a stream, as compatible servers send it too.
import type { IncomingHttpHeaders } from 'node:http';
import { UpstreamError, parseRetryAfter, statusPolicy, credentialsRejected, reportedFailure } from '../../core/upstream-error.js';
import { isObject } from '../shared/json-object.js';

/** `{"error": {message, type, code}}` inside the stream; overloads and server errors are worth another try. */
export function openAIStreamError(provider: string, error: unknown): UpstreamError {
  const body = isObject(error) ? error : {};
  const type = typeof body.type === 'string' ? body.type : undefined;
  return reportedFailure(provider, {
    detail: typeof body.message === 'string' ? body.message : undefined,
    type,
    code: typeof body.code === 'string' ? body.code : undefined,
    retryable: /overload|unavailable|server_error|rate_limit/i.test(`${type ?? 'server_error'} ${String(body.code ?? '')}`),
  });
}

/** OpenAI's error body `{"error":{message,type,param,code}}` through the common status policy. */
export function openAIError(provider: string, status: number, headers: IncomingHttpHeaders, text: string, keySetting: string): UpstreamError {
  let parsed: { message?: unknown; type?: unknown; code?: unknown; param?: unknown } = {};
  try {
    const body = JSON.parse(text);
    if (isObject(body) && isObject(body.error)) parsed = body.error;
    else if (isObject(body)) parsed = body; // compatible servers: {"message": ...} or {"detail": ...}
  } catch {
    // not JSON: keep the status
  }
  const retryAfterMs = parseRetryAfter(headers);
  // OpenAI's 401 message quotes part of the key: only the status reaches the client.
  if (status === 401 || status === 403) return credentialsRejected(provider, { status, settings: keySetting, retryAfterMs });
  const policy = statusPolicy(status);
  const upstreamMessage = typeof parsed.message === 'string' ? parsed.message : typeof (parsed as { detail?: unknown }).detail === 'string' ? String((parsed as { detail?: unknown }).detail) : undefined;
  return new UpstreamError({
    provider,
    reason: 'http_status',
    upstreamStatus: status,
    retryable: policy.retryable,
    retryAfterMs,
    status: policy.status,
    message: upstreamMessage ?? `The ${provider} provider answered HTTP ${status}`,
    type: typeof parsed.type === 'string' ? parsed.type : undefined,
    code: typeof parsed.code === 'string' ? parsed.code : null,
    param: typeof parsed.param === 'string' ? parsed.param : null,
  });
}
