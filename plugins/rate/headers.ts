// OpenAI's rate-limit headers, on every response: x-ratelimit-limit-/remaining-/reset-requests and
// the same for tokens. Resets are durations in OpenAI's format ("20ms", "1s", "6m0s").
import type { Decision, Limits } from './limits.js';

/** 20 → "20ms", 1500 → "1.5s", 360000 → "6m0s", 3723000 → "1h2m3s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.ceil(ms))}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = Math.round((ms % 60_000) / 10) / 100;
  return `${hours > 0 ? `${hours}h` : ''}${hours > 0 || minutes > 0 ? `${minutes}m` : ''}${seconds}s`;
}

export function rateLimitHeaders(limits: Limits, decision: Decision): Record<string, string> {
  return {
    'x-ratelimit-limit-requests': String(Math.min(limits.burst, limits.rph)),
    'x-ratelimit-remaining-requests': String(decision.remainingRequests),
    'x-ratelimit-reset-requests': formatDuration(decision.resetRequestsMs),
    'x-ratelimit-limit-tokens': String(limits.tpm),
    'x-ratelimit-remaining-tokens': String(decision.remainingTokens),
    'x-ratelimit-reset-tokens': formatDuration(decision.resetTokensMs),
  };
}

/** Retry-After in whole seconds (at least 1), and OpenAI's finer retry-after-ms the SDKs prefer. */
export function retryHeaders(retryAfterMs: number): Record<string, string> {
  return { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))), 'retry-after-ms': String(Math.max(1, Math.ceil(retryAfterMs))) };
}
