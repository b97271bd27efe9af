// Rate limit: refuses (429 Rate limit exceeded, Retry-After) a key's request past MODELGATE_RATE_LIMIT_RPM
// a minute (bursts up to MODELGATE_RATE_LIMIT_BURST), MODELGATE_RATE_LIMIT_RPH an hour or
// MODELGATE_RATE_LIMIT_TPM tokens a minute; adds x-ratelimit-* headers to every keyed response.
// Counters in Redis with MODELGATE_STORE=redis, on rate-limiter-flexible (MODELGATE_RATE_LIMIT_REDIS_FAILURE
// says what a Redis failure does); in memory otherwise, the same windows counted synchronously
// (plugins/rate/memory-windows.ts).
import { defineSettings, type SettingsOf } from '../core/settings.js';
import { GatewayError } from '../core/errors.js';
import { waitUntilReady } from '../core/redis.js';
import type { PluginModule } from '../core/pipeline.js';
import type { Limiters, Limits } from './rate/limiters.js';
import { admitInMemory, memoryLimits, type MemoryLimits } from './rate/memory-windows.js';
import { keyLimits, LimiterSets } from './rate/key-limits.js';
import { RedisRateLimits } from './rate/redis-failure.js';
import { admit, correctTokens, type Admission } from './rate/admission.js';
import { rateLimitHeaders, retryHeaders } from './rate/headers.js';
import { consumedUsage } from '../core/consumed.js';

const settings = defineSettings({
  MODELGATE_RATE_LIMITING_ENABLED: { type: 'boolean', default: true, variants: ['prod'], description: 'Enforce rate limits per API key.' },
  MODELGATE_RATE_LIMIT_RPM: {
    type: 'integer',
    default: 100,
    minimum: 1,
    description: "Requests per minute per key: at most RPM in each of the key's minute windows (60 s from its first request in one).",
  },
  MODELGATE_RATE_LIMIT_RPH: {
    type: 'integer',
    default: 1000,
    minimum: 1,
    description: "Requests per hour per key: at most RPH in each of the key's hour windows (3600 s from its first request in one), whatever RPM and BURST allow.",
  },
  MODELGATE_RATE_LIMIT_BURST: {
    type: 'integer',
    default: 200,
    minimum: 1,
    description:
      "Requests a key may send at once after being idle: the minute's RPM plus BURST - RPM from a burst allowance that is used once the minute's are spent and comes back an hour after its first use. At or below RPM it adds nothing.",
  },
  MODELGATE_RATE_LIMIT_TPM: {
    type: 'integer',
    default: 200000,
    minimum: 1,
    description:
      'Tokens per minute per key (spec "tokens_per_minute"), in minute windows. A chat request takes its estimate (prompt tokens + max_tokens, else MODELGATE_DEFAULT_OUTPUT_TOKENS), corrected by the real usage afterwards; one whose estimate exceeds TPM is refused outright. 200000 lets the default 100 RPM through at 2k tokens each.',
  },
  MODELGATE_RATE_LIMIT_REDIS_FAILURE: {
    type: 'string',
    enum: ['local', 'refuse'],
    default: 'local',
    description:
      'With MODELGATE_STORE=redis, when Redis fails or does not answer within REDIS_COMMAND_TIMEOUT: `local` enforces the same limits per replica from its memory (logged, emitted as `fallback` events), `refuse` answers 503 with Retry-After: 1.',
  },
});

/** How long boot waits for Redis before starting on the fallback. */
const BOOT_WAIT_MS = 3000;

export type RateLimitSettings = SettingsOf<typeof settings>;

function refusal(admission: Admission, promptTokens: number): GatewayError {
  if (admission.never) {
    // This request alone is larger than a whole minute of tokens: no wait can help, so there is no
    // Retry-After, and x-should-retry tells the OpenAI SDKs not to retry. The spec fixes the
    // message; the code says why, and param what to shorten (the prompt, or else max_tokens).
    return new GatewayError('rate_limit_exceeded', {
      type: 'tokens',
      code: 'request_too_large_for_tpm',
      param: promptTokens > admission.tokens.limit ? 'messages' : 'max_tokens',
      headers: { 'x-should-retry': 'false' },
    });
  }
  // The spec fixes the message; param names the limit that refused (the key's own, or the gateway's).
  return new GatewayError('rate_limit_exceeded', {
    type: admission.refusedBy === 'tokens' ? 'tokens' : 'requests',
    param: admission.refusedLimit,
    headers: retryHeaders(admission.retryAfterMs),
  });
}

export const rateLimit: PluginModule<typeof settings> = {
  name: 'rate-limit',
  settings,
  async create(values, deps) {
    const s = values as RateLimitSettings;
    if (!s.MODELGATE_RATE_LIMITING_ENABLED) return { name: 'rate-limit' };
    const limits: Limits = { rpm: s.MODELGATE_RATE_LIMIT_RPM, rph: s.MODELGATE_RATE_LIMIT_RPH, burst: s.MODELGATE_RATE_LIMIT_BURST, tpm: s.MODELGATE_RATE_LIMIT_TPM };
    let redis: RedisRateLimits | undefined;
    if (values.MODELGATE_STORE === 'redis') {
      const connection = deps.redis();
      await waitUntilReady(connection, BOOT_WAIT_MS);
      redis = new RedisRateLimits(connection, s.MODELGATE_RATE_LIMIT_REDIS_FAILURE, deps.logger);
    }
    // Redis: rate-limiter-flexible's limiters; embedded: the same windows counted synchronously.
    const sets = redis ? new LimiterSets<Limiters>((own) => redis.limiters(own)) : undefined;
    const memorySets = redis ? undefined : new LimiterSets<MemoryLimits>(memoryLimits);
    // Keys without limits of their own (most) skip the lookup.
    const gatewayLimiters = sets?.get(limits);
    const gatewayMemory = memorySets?.get(limits);

    return {
      name: 'rate-limit',
      step: {
        name: 'rate-limit',
        scope: 'all',
        async handle(ctx, next) {
          const { keyId: key, limits: own } = ctx.principal!;
          const applied = keyLimits(limits, own);
          // Non-chat routes take no tokens; the store wants whole points.
          const tokens = ctx.chat ? Math.ceil(ctx.chat.promptTokens + ctx.chat.expectedOutputTokens) : 0;
          let admission: Admission;
          if (memorySets) {
            admission = admitInMemory(own ? memorySets.get(applied) : gatewayMemory!, applied, key, tokens);
          } else {
            try {
              admission = await admit(own ? sets!.get(applied) : gatewayLimiters!, applied, key, tokens);
            } catch (error) {
              // Only `refuse` lets a store error through: with `local` the insurance limiter answers.
              throw redis!.failed(error as Error);
            }
            if (admission.answeredLocally) deps.events.emit('fallback', { component: 'rate-limit', reason: 'redis_unavailable' });
            else redis!.answered();
          }
          Object.assign(ctx.responseHeaders, rateLimitHeaders(admission.requests, admission.tokens));
          if (!admission.admitted) throw refusal(admission, ctx.chat?.promptTokens ?? 0);
          try {
            await next();
          } finally {
            const taken = admission.tokensTaken;
            if (taken) {
              correctTokens(key, taken, consumedUsage(ctx)?.total_tokens ?? 0).catch((error: Error) => ctx.log.warn({ err: error.message }, 'rate limits: token correction failed'));
            }
          }
        },
      },
    };
  },
};
