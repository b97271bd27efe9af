// OpenAI's rate-limit headers, on every keyed response: x-ratelimit-limit-/remaining-/reset-requests
// for the tighter request limit and the same for tokens. Resets are durations in OpenAI's format
// ("20ms", "1s", "6m0s").
import type { Reading } from './admission.js';
import { retryAfterSeconds } from '../../core/respond.js';

/** 20 → "20ms", 1500 → "1.5s", 360000 → "6m0s", 3723000 → "1h2m3s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.ceil(ms))}ms`;
  const cs = Math.round(ms / 10); // hundredths of a second, rounded once so 59.999 s reads "1m0s"
  const hours = Math.floor(cs / 360_000);
  const minutes = Math.floor((cs % 360_000) / 6000);
  const seconds = (cs % 6000) / 100;
  return `${hours > 0 ? `${hours}h` : ''}${hours > 0 || minutes > 0 ? `${minutes}m` : ''}${seconds}s`;
}

export function rateLimitHeaders(requests: Reading, tokens: Reading): Record<string, string> {
  return {
    'x-ratelimit-limit-requests': String(requests.limit),
    'x-ratelimit-remaining-requests': String(requests.remaining),
    'x-ratelimit-reset-requests': formatDuration(requests.resetMs),
    'x-ratelimit-limit-tokens': String(tokens.limit),
    'x-ratelimit-remaining-tokens': String(tokens.remaining),
    'x-ratelimit-reset-tokens': formatDuration(tokens.resetMs),
  };
}

/** Retry-After in whole seconds (at least 1), and OpenAI's finer retry-after-ms the SDKs prefer. */
export function retryHeaders(retryAfterMs: number): Record<string, string> {
  return { 'retry-after': retryAfterSeconds(retryAfterMs), 'retry-after-ms': String(Math.max(1, Math.ceil(retryAfterMs))) };
}
