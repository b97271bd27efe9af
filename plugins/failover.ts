// Failover: sends the request to the router's candidates and answers the client. Each attempt is
// bounded by MODELGATE_TIMEOUT (for streams: until the first content, then per idle gap). Reads the
// MODELGATE_TIMEOUT, MODELGATE_RETRIES / RETRY_DELAY, MODELGATE_FAILOVER_* and
// MODELGATE_CIRCUIT_BREAKER_* settings.
import { defineSettings, type SettingsOf } from '../core/settings.js';
import { isUpstreamError } from '../core/upstream-error.js';
import { openAttempt, recordUsage } from '../core/attempt.js';
import { sendCompletion } from '../core/respond.js';
import type { Forwarder } from '../core/proxy.js';
import type { PluginModule } from '../core/pipeline.js';

const settings = defineSettings({
  MODELGATE_TIMEOUT: {
    type: 'integer',
    default: 30000,
    minimum: 1,
    description: 'ms an attempt may take: the whole answer, or for a stream its first content and then each gap between events.',
  },
  MODELGATE_RETRIES: { type: 'integer', default: 3, minimum: 0, description: 'Retries of a failed attempt on the same target.' },
  MODELGATE_RETRY_DELAY: { type: 'integer', default: 1000, minimum: 0, description: 'ms before the first retry.' },
  MODELGATE_FAILOVER_ENABLED: { type: 'boolean', default: true, description: 'Try the next candidate when one fails.' },
  MODELGATE_FAILOVER_RETRIES: { type: 'integer', default: 3, minimum: 0, description: 'Other candidates tried after the first fails.' },
  MODELGATE_FAILOVER_DELAY: { type: 'integer', default: 1000, minimum: 0, description: 'ms before moving on to the next candidate.' },
  MODELGATE_CIRCUIT_BREAKER_ENABLED: { type: 'boolean', default: true, description: 'Keep a provider out after repeated failures.' },
  MODELGATE_CIRCUIT_BREAKER_THRESHOLD: { type: 'integer', default: 5, minimum: 1, description: 'Consecutive failures that open a provider\'s circuit.' },
  MODELGATE_CIRCUIT_BREAKER_TIMEOUT: { type: 'integer', default: 30000, minimum: 1, description: 'ms a circuit stays open before one probe request is let through.' },
});

class TimeoutReason extends Error {
  override name = 'TimeoutError';
}

export const failover: PluginModule<typeof settings, { forwarder: Forwarder }> = {
  name: 'failover',
  settings,
  create(values, { forwarder }) {
    const s = values as SettingsOf<typeof settings>;
    return {
      name: 'failover',
      step: {
        name: 'failover',
        scope: 'chat',
        async handle(ctx) {
          const target = ctx.candidates![0]!;
          ctx.outcome.target = target;
          ctx.outcome.attempts = 1;
          for (const hook of ctx.beforeAttempt) await hook(target);
          // One controller and timer per attempt: AbortSignal.any/timeout cost ~30 µs each on Node 20.
          const attempt = new AbortController();
          const timer = setTimeout(() => attempt.abort(new TimeoutReason()), s.MODELGATE_TIMEOUT);
          const onClientGone = () => attempt.abort(ctx.signal.reason);
          ctx.signal.addEventListener('abort', onClientGone, { once: true });
          const signal = attempt.signal;
          try {
            const opened = await openAttempt(ctx, target, forwarder, signal);
            if (opened.kind === 'completion') {
              ctx.outcome.completion = opened.completion;
              recordUsage(ctx, target, opened.completion.usage);
              sendCompletion(ctx, opened.completion);
            } else {
              await opened.stream.pipe(s.MODELGATE_TIMEOUT);
            }
          } catch (error) {
            if (isUpstreamError(error)) throw error.toGatewayError();
            if (ctx.signal.aborted) return;
            throw error;
          } finally {
            clearTimeout(timer);
            ctx.signal.removeEventListener('abort', onClientGone);
          }
        },
      },
    };
  },
};
