// Failover: sends the request down the router's chain and answers the client. Each target gets
// cockatiel's retry → circuit breaker → timeout (plugins/failover/policies.ts); a failing target
// hands over to the next, up to MODELGATE_FAILOVER_RETRIES more, the client's named fallbacks
// among them (plugins/router/chain.ts); a client may lower the retry counts, never raise them. A
// 4xx caused by the request stops everything, and so does a beforeAttempt refusal (cost guard) of
// the first candidate — of a later one, it only skips that candidate. Streams commit on their
// first content, so only failures before it can fail over.
// Reads MODELGATE_TIMEOUT, MODELGATE_RETRIES / RETRY_DELAY / RETRY_DELAY_MULTIPLIER /
// EXPONENTIAL_BACKOFF, MODELGATE_FAILOVER_*, MODELGATE_CIRCUIT_BREAKER_* and MODELGATE_MAX_RETRY_AFTER.
import { isBrokenCircuitError } from 'cockatiel';
import type { Cancellation } from '../core/cancellation.js';
import { defineSettings, type SettingsOf } from '../core/settings.js';
import { GatewayError, isGatewayError } from '../core/errors.js';
import { isUpstreamError, type UpstreamError } from '../core/upstream-error.js';
import { AbortedError } from '../core/proxy.js';
import { openAttempt, recordUsage, type Opened } from '../core/attempt.js';
import { retryAfterSeconds } from '../core/respond.js';
import { sendAnswer, sendEmbeddings } from '../core/answer.js';
import type { FailedAttempt, RequestContext, Target } from '../core/context.js';
import type { HealthRegistry } from '../core/health.js';
import type { PluginModule } from '../core/pipeline.js';
import type { OverrideSpec } from '../core/overrides.js';
import { MAX_MODEL_NAME_LENGTH } from '../core/chat-request.js';
import { AttemptTimeout, Breakers, RetryPolicies, type RetryConfig } from './failover/policies.js';
import { failoverChain } from './router/chain.js';

const settings = defineSettings({
  MODELGATE_TIMEOUT: {
    type: 'integer',
    default: 30000,
    minimum: 1,
    description: 'ms an attempt may take: the whole answer, or for a stream its first content and then each gap between events.',
  },
  MODELGATE_RETRIES: { type: 'integer', default: 3, minimum: 0, description: 'Retries of a failed attempt on the same target (docs/routing.md says which failures are retried).' },
  MODELGATE_RETRY_DELAY: { type: 'integer', default: 1000, minimum: 0, description: 'ms before the first retry.' },
  MODELGATE_RETRY_DELAY_MULTIPLIER: { type: 'number', default: 2, minimum: 1, description: 'Each further retry waits this many times longer (with exponential backoff on).' },
  MODELGATE_EXPONENTIAL_BACKOFF: { type: 'boolean', default: true, description: 'Grow the retry delay by the multiplier; off: every retry waits MODELGATE_RETRY_DELAY.' },
  MODELGATE_FAILOVER_ENABLED: { type: 'boolean', default: true, description: 'Try the next candidate when one fails; off: only retries on the chosen target.' },
  MODELGATE_FAILOVER_RETRIES: { type: 'integer', default: 3, minimum: 0, description: 'Other candidates tried after the first one fails.' },
  MODELGATE_FAILOVER_DELAY: { type: 'integer', default: 1000, minimum: 0, description: 'ms before moving on to the next candidate.' },
  MODELGATE_CIRCUIT_BREAKER_ENABLED: { type: 'boolean', default: true, description: 'Keep a provider out after repeated failures.' },
  MODELGATE_CIRCUIT_BREAKER_THRESHOLD: { type: 'integer', default: 5, minimum: 1, description: "Consecutive failures that open a provider's circuit." },
  MODELGATE_CIRCUIT_BREAKER_TIMEOUT: { type: 'integer', default: 30000, minimum: 1, description: 'ms a circuit stays open before one probe request is let through.' },
  MODELGATE_MAX_RETRY_AFTER: {
    type: 'integer',
    default: 60000,
    minimum: 0,
    description: "ms: the longest a provider's Retry-After keeps that provider+model out of routing (and the longest Retry-After passed on to clients); longer waits are cut to this.",
  },
});

const overrides: OverrideSpec[] = [
  {
    name: 'failover',
    fields: {
      enabled: { type: 'boolean', description: 'Fail over to other candidates.' },
      fallback_providers: { type: 'array', items: { type: 'string' }, description: 'Providers to fall back to, within the failover limit, ahead of the rest of the ranking.' },
      fallback_models: { type: 'array', items: { type: 'string', maxLength: MAX_MODEL_NAME_LENGTH }, description: 'Models to fall back to, within the failover limit, ahead of the rest of the ranking.' },
      retry_attempts: { type: 'integer', minimum: 0, description: 'Other candidates tried after the first fails; at most MODELGATE_FAILOVER_RETRIES.' },
    },
    headers: {
      'x-modelgate-failover': 'enabled',
      'x-modelgate-fallback-providers': 'fallback_providers',
      'x-modelgate-fallback-models': 'fallback_models',
      'x-modelgate-failover-retries': 'retry_attempts',
    },
  },
  {
    name: 'retry',
    fields: {
      retry_attempts: { type: 'integer', minimum: 0, description: 'Retries on the same target; at most MODELGATE_RETRIES.' },
      retry_delay: { type: 'integer', minimum: 0, description: 'ms before the first retry.' },
      retry_delay_multiplier: { type: 'number', minimum: 1, description: 'Growth of the delay.' },
      exponential_backoff: { type: 'boolean', description: 'Grow the delay or keep it constant.' },
    },
    headers: {
      'x-modelgate-retry-attempts': 'retry_attempts',
      'x-modelgate-retry-delay': 'retry_delay',
      'x-modelgate-retry-delay-multiplier': 'retry_delay_multiplier',
      'x-modelgate-exponential-backoff': 'exponential_backoff',
    },
  },
];

interface FailoverOverride {
  enabled?: boolean;
  retry_attempts?: number;
}
interface RetryOverride {
  retry_attempts?: number;
  retry_delay?: number;
  retry_delay_multiplier?: number;
  exponential_backoff?: boolean;
}

type Failure = UpstreamError | GatewayError;

const NONE = Object.freeze({});

export const failover: PluginModule<typeof settings> = {
  name: 'failover',
  settings,
  overrides,
  create(values, { forwarder, health, providers }) {
    const s = values as SettingsOf<typeof settings>;
    const configured = [...providers.values()].filter((provider) => provider.configured).map((provider) => provider.name);
    const breakers = new Breakers(
      { enabled: s.MODELGATE_CIRCUIT_BREAKER_ENABLED, threshold: s.MODELGATE_CIRCUIT_BREAKER_THRESHOLD, recoveryMs: s.MODELGATE_CIRCUIT_BREAKER_TIMEOUT },
      health,
      configured,
    );
    // What almost every request uses (no retry override): built once, its policies looked up without a key.
    const operatorRetry: RetryConfig = { attempts: s.MODELGATE_RETRIES, delayMs: s.MODELGATE_RETRY_DELAY, multiplier: s.MODELGATE_RETRY_DELAY_MULTIPLIER, exponential: s.MODELGATE_EXPONENTIAL_BACKOFF };
    const retries = new RetryPolicies(health, operatorRetry);
    const timeouts = new AttemptTimeout(s.MODELGATE_TIMEOUT);

    /** Retries, breaker and timeout around the calls to one target; resolves with a usable answer. */
    function tryTarget(ctx: RequestContext, target: Target, config: RetryConfig, last: boolean): Promise<Opened> {
      const provider = target.provider.name;
      let calling = false;
      let endedAt = 0;
      const attemptOnce = async ({ attempt, signal }: { attempt: number; signal: Cancellation }) => {
        // cockatiel's retry delay is not abortable: a client that left meanwhile gets no new call.
        if (signal.aborted) throw new AbortedError('client disconnected');
        if (attempt > 0) {
          ctx.outcome.waitedMs += performance.now() - endedAt;
          for (const hook of ctx.beforeRetry) await hook(target);
        }
        let started = 0;
        // Counted here, where the breaker has admitted the call: a call it refuses was never made.
        const call = (outer: Cancellation) => {
          ctx.outcome.attempts++;
          if (attempt > 0) ctx.outcome.retries++;
          calling = true;
          started = performance.now();
          return timeouts.run(provider, (inner) => openAttempt(ctx, target, forwarder, inner), outer);
        };
        try {
          const opened = await breakers.execute(provider, call, signal, discardOpened);
          observe(health, ctx, target, performance.now() - started);
          return opened;
        } catch (error) {
          if (isUpstreamError(error)) {
            observe(health, ctx, target, performance.now() - started, error);
            const failed: FailedAttempt = { target, reason: error.reason, upstreamStatus: error.upstreamStatus };
            if (breakers.opened(error)) failed.openedCircuit = true;
            ctx.outcome.failedAttempts.push(failed);
          } else if (error instanceof AbortedError && ctx.signal.aborted && calling) {
            // The client left while this call was in flight: the provider may still bill it.
            ctx.outcome.failedAttempts.push({ target, reason: 'client_abort', upstreamStatus: 0 });
          }
          throw error;
        } finally {
          calling = false;
          endedAt = performance.now();
        }
      };
      return retries.execute(config, last, attemptOnce, ctx.signal, () => calling, discardOpened);
    }

    async function deliver(ctx: RequestContext, target: Target, opened: Opened): Promise<void> {
      if (opened.kind === 'completion') {
        ctx.outcome.completion = opened.completion;
        recordUsage(ctx, target, opened.completion.usage);
        await sendAnswer(ctx, opened.completion, opened.bytes);
        return;
      }
      if (opened.kind === 'embeddings') {
        ctx.outcome.embeddings = opened.embeddings;
        const { prompt_tokens, total_tokens } = opened.embeddings.usage;
        recordUsage(ctx, target, { prompt_tokens, completion_tokens: 0, total_tokens });
        sendEmbeddings(ctx, opened.embeddings);
        return;
      }
      const failure = await opened.stream.pipe(s.MODELGATE_TIMEOUT);
      if (failure) observe(health, ctx, target, 0, failure);
    }

    return {
      name: 'failover',
      step: {
        name: 'failover',
        scope: 'chat',
        async handle(ctx) {
          const chat = ctx.chat!;
          const wanted = (chat.overrides.failover ?? NONE) as FailoverOverride;
          const retry = chat.overrides.retry as RetryOverride | undefined;
          // A client may ask for fewer retries than the operator allows, never more.
          const config: RetryConfig = retry
            ? {
                attempts: Math.min(retry.retry_attempts ?? s.MODELGATE_RETRIES, s.MODELGATE_RETRIES),
                delayMs: retry.retry_delay ?? s.MODELGATE_RETRY_DELAY,
                multiplier: retry.retry_delay_multiplier ?? s.MODELGATE_RETRY_DELAY_MULTIPLIER,
                exponential: retry.exponential_backoff ?? s.MODELGATE_EXPONENTIAL_BACKOFF,
              }
            : operatorRetry;
          const enabled = wanted.enabled ?? s.MODELGATE_FAILOVER_ENABLED;
          const others = Math.min(wanted.retry_attempts ?? s.MODELGATE_FAILOVER_RETRIES, s.MODELGATE_FAILOVER_RETRIES);
          const chain = failoverChain(ctx.candidates!, enabled ? 1 + others : 1);
          const failures: Failure[] = [];

          for (let i = 0; i < chain.length; i++) {
            const target = chain[i]!;
            const last = i === chain.length - 1;
            const provider = target.provider.name;
            // Something this request (or a concurrent one) learned may rule the target out now.
            if (health.cooldownRemaining(provider, target.model.id) > 0 || health.circuitOpen(provider) || (!last && breakers.probing(provider))) continue;
            if (failures.length > 0) {
              ctx.outcome.fallbacks++;
              if (s.MODELGATE_FAILOVER_DELAY > 0) {
                const waiting = performance.now();
                await sleep(s.MODELGATE_FAILOVER_DELAY, ctx.signal);
                ctx.outcome.waitedMs += performance.now() - waiting;
              }
            }
            if (ctx.signal.aborted) return;
            const previous = ctx.outcome.target;
            ctx.outcome.target = target;
            try {
              for (const hook of ctx.beforeAttempt) await hook(target);
            } catch (error) {
              // A refusal of the client's own first choice (the cost guard: unpriced, over the
              // per-request cap, out of budget) is the answer. A refused fallback is only a
              // candidate that cannot be used: the next one is tried, and the refusal is one of
              // the failures the final answer is chosen from.
              if (i === 0 || !isGatewayError(error)) throw error;
              ctx.outcome.target = previous;
              failures.push(error);
              continue;
            }
            try {
              const opened = await tryTarget(ctx, target, config, last);
              return await deliver(ctx, target, opened);
            } catch (error) {
              if (ctx.signal.aborted) return;
              if (isUpstreamError(error)) {
                if (error.retryAfterMs !== undefined) health.coolDown(provider, target.model.id, Math.min(error.retryAfterMs, s.MODELGATE_MAX_RETRY_AFTER));
                if (error.causedByRequest) throw error.toGatewayError();
                failures.push(error);
              } else if (isGatewayError(error) && error.status === 400) {
                failures.push(error); // the adapter cannot express this request; another may
              } else if (!isBrokenCircuitError(error)) {
                throw error;
              }
            }
          }
          throw finalError(ctx, failures, health, s.MODELGATE_MAX_RETRY_AFTER);
        },
      },
    };
  },
};

/** An answer nobody will read (its client left while it arrived): free the upstream connection. */
function discardOpened(opened: Opened): void {
  if (opened.kind === 'stream') opened.stream.cancel();
}

/**
 * Tells the health registry how the provider did. An error the request caused (a 4xx every
 * provider would give) says nothing about the provider: it is not recorded, so it neither lowers
 * the success rate nor shows one tenant's error text in /v1/providers/status.
 */
function observe(health: HealthRegistry, ctx: RequestContext, target: Target, latencyMs: number, error?: UpstreamError): void {
  if (error?.causedByRequest) return;
  health.record({
    provider: target.provider.name,
    model: target.model.id,
    stream: ctx.chat!.stream,
    ok: error === undefined,
    latencyMs,
    error: error && { message: error.message, status: error.upstreamStatus || error.status, reason: error.reason },
  });
}

/**
 * Every candidate failed or was unavailable: the one answer that says so best — the adapter's 400
 * if no provider could express the request; the credential error if every provider refused the
 * gateway's keys (502); 429 Rate limit exceeded if every failure was a provider rate limit; else
 * 503 Provider unavailable. Retry-After carries the shortest known wait.
 */
function finalError(ctx: RequestContext, failures: Failure[], health: HealthRegistry, maxRetryAfterMs: number): GatewayError {
  const upstream = failures.filter(isUpstreamError);
  if (upstream.length === 0 && failures.length > 0) return failures[0] as GatewayError;
  // The gateway's credentials (or credit) were refused everywhere: that is the operator's to fix.
  if (upstream.length > 0 && upstream.every((f) => f.status === 502 && f.reason === 'http_status')) return upstream[0]!.toGatewayError();
  const waits = [
    ...upstream.flatMap((f) => (f.retryAfterMs === undefined ? [] : [Math.min(f.retryAfterMs, maxRetryAfterMs)])),
    ...(ctx.candidates ?? []).map((t) => Math.max(health.cooldownRemaining(t.provider.name, t.model.id), health.circuitRemaining(t.provider.name))).filter((ms) => ms > 0),
  ];
  const headers: Record<string, string> = waits.length > 0 ? { 'retry-after': retryAfterSeconds(Math.min(...waits)) } : {};
  // Only rate limits: the spec's 429 "Rate limit exceeded (service or provider)" tells clients to slow down.
  if (upstream.length > 0 && upstream.every((f) => f.upstreamStatus === 429)) {
    return new GatewayError('provider_rate_limited', { headers, cause: tried(failures) });
  }
  const allTimeouts = upstream.length > 0 && upstream.every((f) => f.reason === 'timeout');
  return new GatewayError('provider_unavailable', { headers, code: allTimeouts ? 'upstream_timeout' : 'provider_unavailable', cause: tried(failures) });
}

/** What each candidate answered, for the log line of the request (core/server.ts). */
function tried(failures: Failure[]): Array<{ provider?: string; status: number; message: string }> {
  return failures.map((f) => ({ provider: isUpstreamError(f) ? f.provider : undefined, status: f.status, message: f.message }));
}

function sleep(ms: number, signal: Cancellation): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
