// Cache: answers a repeated chat request from stored answers without calling a provider (a HIT costs
// 0 and says so; `x-modelgate-cache: HIT | MISS | BYPASS`), and stores complete answers, streamed or
// not, per tenant. Refuses (400) an `x-modelgate-cache` header other than `bypass` (core validates
// the body's `modelgate.cache` object against the override shape below).
// Reads the MODELGATE_CACHE_* settings (and the REDIS_* ones through the shared connection).
import { defineSettings, type SettingsOf } from '../core/settings.js';
import { waitUntilReady } from '../core/redis.js';
import { GatewayError } from '../core/errors.js';
import { bareModel } from '../core/catalog.js';
import { baseHeaders, outcomeHeaders, sendCompletionBytes } from '../core/respond.js';
import { answerStream, sendAnswer, sendEmbeddings } from '../core/answer.js';
import type { RequestContext, Target } from '../core/context.js';
import type { PluginDeps, PluginModule } from '../core/pipeline.js';
import type { OverrideSpec } from '../core/overrides.js';
import type { CacheBackend } from './cache/backend.js';
import { memoryBackend } from './cache/memory.js';
import { redisBackend } from './cache/redis.js';
import { cacheKey } from './cache/key.js';
import { decode, encode, storedCompletion, type CachedAnswer, type StoredAnswer } from './cache/entry.js';
import { asChunks, asCompletion, streamFinished } from './cache/replay.js';

const settings = defineSettings({
  MODELGATE_CACHE_ENABLED: { type: 'boolean', default: true, description: 'Serve repeated identical requests from the response cache.' },
  MODELGATE_CACHE_TYPE: {
    type: 'string',
    enum: ['memory', 'redis'],
    default: 'memory',
    description: 'Where cached answers live: this process (memory) or Redis (the REDIS_* settings), shared by every replica.',
  },
  MODELGATE_CACHE_TTL: { type: 'integer', default: 3600, minimum: 1, description: 'Seconds a cached answer is served after it was stored.' },
  MODELGATE_CACHE_MAX_SIZE: {
    type: 'integer',
    default: 1000,
    minimum: 1,
    description:
      'MB the memory cache may take, counting what each entry really costs: its answer as stored (compressed) in 128-byte blocks, its key and ~160 bytes of slots; the least recently used go first. Redis is bounded by its own maxmemory.',
  },
  MODELGATE_CACHE_COMPRESSION: { type: 'boolean', default: true, description: 'Store answers brotli-compressed (JSON shrinks 3-10x; reading one back takes microseconds).' },
});

export type CacheSettings = SettingsOf<typeof settings>;

/** `modelgate: {"cache": {"enabled": false}}` in the body turns the cache off for one request. */
const overrides: OverrideSpec[] = [{ name: 'cache', fields: { enabled: { type: 'boolean', description: 'Read and store this request in the cache.' } }, headers: {} }];

const CONNECT_WAIT_MS = 2000;

type Mode = 'use' | 'refresh' | 'skip';

/**
 * What this request allows: `skip` neither reads nor stores (`modelgate.cache` off,
 * `x-modelgate-cache: bypass`, `Cache-Control: no-store`); `refresh` does not read but stores the
 * fresh answer (`Cache-Control: no-cache`); `use` reads and stores.
 */
function modeOf(ctx: RequestContext): Mode {
  if ((ctx.chat!.overrides.cache as { enabled?: boolean } | undefined)?.enabled === false) return 'skip';
  const header = ctx.headers['x-modelgate-cache'];
  if (header !== undefined) {
    if (String(header).trim().toLowerCase() !== 'bypass') {
      throw new GatewayError('bad_request', { message: "Invalid value for header 'x-modelgate-cache': must be \"bypass\"." });
    }
    return 'skip';
  }
  const control = ctx.headers['cache-control'];
  if (control) {
    const directives = control.toLowerCase().split(',').map((directive) => directive.trim());
    if (directives.includes('no-store')) return 'skip';
    if (directives.includes('no-cache')) return 'refresh';
  }
  return 'use';
}

/** The answer to keep, if this request produced a whole one: 200, not interrupted, every choice finished (and not filtered). */
function storable(ctx: RequestContext): CachedAnswer | undefined {
  const outcome = ctx.outcome;
  if (ctx.status !== 200 || ctx.error || outcome.interrupted || ctx.signal.aborted || !outcome.target) return undefined;
  const base = { provider: outcome.target.provider.name, model: outcome.target.model.id, usage: outcome.usage, costUsd: outcome.cost };
  // A filtered answer may be cut short or depend on a moderation decision that can change: not kept.
  const keep = (reason: string | null | undefined) => !!reason && reason !== 'content_filter';
  if (outcome.embeddings) return { ...base, embeddings: outcome.embeddings };
  if (outcome.completion) {
    const { choices } = outcome.completion;
    return choices.length > 0 && choices.every((choice) => keep(choice.finish_reason)) ? { ...base, completion: outcome.completion } : undefined;
  }
  const chunks = outcome.chunks;
  if (!chunks || !streamFinished(chunks) || chunks.some((chunk) => chunk.choices.some((choice) => choice.finish_reason === 'content_filter'))) return undefined;
  return { ...base, chunks: chunks.filter((chunk) => !(chunk.choices.length === 0 && chunk.usage)) };
}

export const cache: PluginModule<typeof settings, Pick<PluginDeps, 'catalog' | 'providers' | 'cacheStats' | 'redis' | 'settings'>> = {
  name: 'cache',
  settings,
  overrides,
  async create(values, deps) {
    const s = values as CacheSettings;
    if (!s.MODELGATE_CACHE_ENABLED) return { name: 'cache' };
    let backend: CacheBackend;
    if (s.MODELGATE_CACHE_TYPE === 'redis') {
      const redis = deps.redis();
      // Boot waits (boundedly) for the connection, or the first requests would all be misses.
      await waitUntilReady(redis, CONNECT_WAIT_MS);
      backend = redisBackend(redis, s.MODELGATE_CACHE_TTL);
    } else {
      backend = memoryBackend({ maxBytes: s.MODELGATE_CACHE_MAX_SIZE * 1024 * 1024, ttlMs: s.MODELGATE_CACHE_TTL * 1000 });
    }
    deps.cacheStats.provide(backend);
    void backend.refresh(); // a Redis cache may already hold entries: count them before the first scrape

    /** Who produced the answer, for the x-modelgate-provider/model headers and the metrics. */
    function targetOf(answer: CachedAnswer): Target | undefined {
      const provider = deps.providers.get(answer.provider);
      if (!provider) return undefined;
      return { provider, model: deps.catalog.get(answer.provider, answer.model) ?? bareModel(answer.provider, answer.model) };
    }

    async function serve(ctx: RequestContext, answer: StoredAnswer): Promise<void> {
      const outcome = ctx.outcome;
      outcome.cache = 'HIT';
      outcome.attempts = 0;
      outcome.cost = 0;
      outcome.usage = answer.usage;
      outcome.savedUsd = answer.costUsd;
      outcome.target = targetOf(answer);
      const chat = ctx.chat!;
      // The router, which names the strategy, does not run on a hit. Overrides are part of the key,
      // so the strategy this request asks for is the one the stored answer was routed under.
      const routing = chat.overrides.routing as { strategy?: string } | undefined;
      ctx.strategy ??= routing?.strategy ?? (deps.settings.MODELGATE_ROUTING_STRATEGY as string | undefined);
      if (answer.embeddings) {
        outcome.embeddings = answer.embeddings;
        sendEmbeddings(ctx, answer.embeddings);
        return;
      }
      if (!chat.stream) {
        const bytes = answer.completionBytes;
        if (bytes && !chat.responses) {
          // The stored bytes are what the first client received: written as they are. The
          // completion is parsed only if something reads it (a log line with MODELGATE_LOG_RESPONSES).
          const completion = () => {
            try {
              return storedCompletion(answer);
            } catch {
              return undefined; // bytes damaged past their braces: the log line goes without them
            }
          };
          Object.defineProperty(outcome, 'completion', { get: completion, enumerable: true, configurable: true });
          sendCompletionBytes(ctx, bytes);
          return;
        }
        outcome.completion = asCompletion(answer);
        await sendAnswer(ctx, outcome.completion);
        return;
      }
      const writer = answerStream(ctx);
      ctx.status = 200;
      writer.start(200, { ...baseHeaders(ctx), ...outcomeHeaders(ctx) });
      outcome.ttftMs = performance.now() - ctx.startedAt;
      writer.sendAll(asChunks(answer, chat.includeUsage));
      await writer.done();
    }

    return {
      name: 'cache',
      step: {
        name: 'cache',
        scope: 'chat',
        async handle(ctx, next) {
          const mode = modeOf(ctx);
          if (mode === 'skip') {
            ctx.outcome.cache = 'BYPASS';
            return next();
          }
          const key = cacheKey(ctx);
          if (mode === 'use') {
            const stored = await backend.get(key);
            const answer = stored && decode(stored);
            // Keys differ by API, so an entry is of this request's kind; one that is not reads as a miss.
            if (answer && !answer.embeddings === !ctx.chat!.embeddings) return serve(ctx, answer);
          }
          ctx.outcome.cache = mode === 'use' ? 'MISS' : 'BYPASS';
          if (ctx.chat!.stream) ctx.collectChunks = true;
          await next();
          // The response has been sent: storing (and compressing) no longer delays this client.
          const answer = storable(ctx);
          if (answer) backend.set(key, encode(answer, s.MODELGATE_CACHE_COMPRESSION, ctx.outcome.completionJson));
        },
      },
    };
  },
};
