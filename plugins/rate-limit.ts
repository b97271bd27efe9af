// Rate limit: refuses (429 Rate limit exceeded, Retry-After) a key's request past MODELGATE_RATE_LIMIT_RPM
// with bursts of MODELGATE_RATE_LIMIT_BURST, MODELGATE_RATE_LIMIT_RPH in any hour or
// MODELGATE_RATE_LIMIT_TPM tokens a minute; adds x-ratelimit-* headers to every keyed response. In
// Redis with MODELGATE_STORE=redis; MODELGATE_RATE_LIMIT_REDIS_FAILURE says what a Redis failure does.
import { randomUUID } from 'node:crypto';
import { defineSettings, type SettingsOf } from '../core/settings.js';
import { GatewayError } from '../core/errors.js';
import { waitUntilReady } from '../core/redis.js';
import type { PluginModule } from '../core/pipeline.js';
import type { RequestContext } from '../core/context.js';
import { MemoryRateStore, type Limits, type RateStore } from './rate/limits.js';
import { RedisRateStore } from './rate/redis-store.js';
import { FallbackRateStore } from './rate/fallback-store.js';
import { rateLimitHeaders, retryHeaders } from './rate/headers.js';
import { consumedUsage } from './cost/consumed.js';

const settings = defineSettings({
  MODELGATE_RATE_LIMITING_ENABLED: { type: 'boolean', default: true, variants: ['prod'], description: 'Enforce rate limits per API key.' },
  MODELGATE_RATE_LIMIT_RPM: {
    type: 'integer',
    default: 100,
    minimum: 1,
    description: 'Sustained requests per minute per key: the rate at which the burst allowance refills (one request every 60/RPM seconds).',
  },
  MODELGATE_RATE_LIMIT_RPH: { type: 'integer', default: 1000, minimum: 1, description: 'Requests per key in any 60 minutes (a sliding hour).' },
  MODELGATE_RATE_LIMIT_BURST: {
    type: 'integer',
    default: 200,
    minimum: 1,
    description: 'Requests a key may make at once after being idle (the size of its allowance); then it gets RPM per minute.',
  },
  MODELGATE_RATE_LIMIT_TPM: {
    type: 'integer',
    default: 200000,
    minimum: 1,
    description:
      'Tokens per minute per key (spec "tokens_per_minute"). A chat request takes its estimate (prompt tokens + max_tokens, else MODELGATE_DEFAULT_OUTPUT_TOKENS), corrected by the real usage afterwards. 200000 lets the default 100 RPM through at 2k tokens each.',
  },
  MODELGATE_RATE_LIMIT_REDIS_FAILURE: {
    type: 'string',
    enum: ['local', 'refuse'],
    default: 'local',
    description:
      'With MODELGATE_STORE=redis, when Redis fails or does not answer within REDIS_COMMAND_TIMEOUT: `local` enforces the same limits per replica (logged, counted as `fallback` events), `refuse` answers 503.',
  },
});

/** How long boot waits for Redis before starting on the fallback. */
const BOOT_WAIT_MS = 3000;

export type RateLimitSettings = SettingsOf<typeof settings>;

export const rateLimit: PluginModule<typeof settings> = {
  name: 'rate-limit',
  settings,
  async create(values, deps) {
    const s = values as RateLimitSettings;
    if (!s.MODELGATE_RATE_LIMITING_ENABLED) return { name: 'rate-limit' };
    const limits: Limits = { rpm: s.MODELGATE_RATE_LIMIT_RPM, rph: s.MODELGATE_RATE_LIMIT_RPH, burst: s.MODELGATE_RATE_LIMIT_BURST, tpm: s.MODELGATE_RATE_LIMIT_TPM };
    let store: RateStore = new MemoryRateStore(limits);
    if (values.MODELGATE_STORE === 'redis') {
      const redis = deps.redis('rate-limit');
      await waitUntilReady(redis, BOOT_WAIT_MS);
      store = new FallbackRateStore(new RedisRateStore(redis, limits), store, s.MODELGATE_RATE_LIMIT_REDIS_FAILURE, deps.logger, deps.events);
    }

    const estimate = (ctx: RequestContext) => (ctx.chat ? ctx.chat.promptTokens + ctx.chat.expectedOutputTokens : 0);

    return {
      name: 'rate-limit',
      step: {
        name: 'rate-limit',
        scope: 'all',
        async handle(ctx, next) {
          const key = ctx.principal!.keyId;
          const taken = estimate(ctx);
          // A fresh id: the request id may come from the client, and the hour log needs unique entries.
          const decision = await store.consume(key, taken, randomUUID());
          Object.assign(ctx.responseHeaders, rateLimitHeaders(limits, decision));
          if (!decision.admitted) {
            const never = decision.retryAfterMs === Infinity;
            throw new GatewayError('rate_limit_exceeded', {
              type: decision.refusedBy === 'tokens' ? 'tokens' : 'requests',
              param: never ? 'max_tokens' : null,
              // Larger than a whole minute of tokens: waiting will not help.
              headers: never ? { 'x-should-retry': 'false' } : retryHeaders(decision.retryAfterMs),
            });
          }
          try {
            await next();
          } finally {
            if (taken > 0) {
              const used = consumedUsage(ctx)?.total_tokens ?? 0;
              if (used !== taken) store.adjust(key, used - taken).catch((error: Error) => ctx.log.warn({ err: error.message }, 'rate limits: token correction failed'));
            }
          }
        },
      },
      async close() {
        store.close?.();
      },
    };
  },
};
