// Redis first, this process's own limiter when Redis fails. A failed or timed-out call (bounded by
// REDIS_COMMAND_TIMEOUT; the connection has no offline queue, so a dead Redis fails at once) is
// answered locally, logged once per outage, counted, and announced as a `fallback` event. For a
// second after a failure Redis is not asked at all, so a hung Redis costs one timeout per second,
// not one per request. In `refuse` mode the request gets 503 instead.
import type { Logger } from 'pino';
import { GatewayError } from '../../core/errors.js';
import type { EventBus } from '../../core/events.js';
import type { Decision, RateStore } from './limits.js';

const PAUSE_AFTER_FAILURE_MS = 1000;

export class FallbackRateStore implements RateStore {
  /** Requests answered by the local limiter because Redis failed. */
  fallbacks = 0;
  private skipUntil = 0;
  private down = false;

  constructor(
    private readonly shared: RateStore,
    private readonly local: RateStore,
    private readonly mode: 'local' | 'refuse',
    private readonly logger: Logger,
    private readonly events: EventBus,
  ) {}

  async consume(key: string, tokens: number, requestId: string): Promise<Decision> {
    if (Date.now() >= this.skipUntil) {
      try {
        const decision = await this.shared.consume(key, tokens, requestId);
        if (this.down) this.logger.info('rate limits: Redis answers again, shared limits restored');
        this.down = false;
        return decision;
      } catch (error) {
        this.failed(error as Error);
      }
    }
    if (this.mode === 'refuse') {
      throw new GatewayError('store_unavailable', { message: 'Rate limit store unavailable', headers: { 'retry-after': '1' } });
    }
    this.fallbacks++;
    this.events.emit('fallback', { component: 'rate-limit', reason: 'redis_unavailable' });
    return this.local.consume(key, tokens, requestId);
  }

  async adjust(key: string, delta: number): Promise<void> {
    if (Date.now() < this.skipUntil) return this.local.adjust(key, delta);
    try {
      await this.shared.adjust(key, delta);
    } catch (error) {
      this.failed(error as Error);
      await this.local.adjust(key, delta);
    }
  }

  private failed(error: Error): void {
    this.skipUntil = Date.now() + PAUSE_AFTER_FAILURE_MS;
    if (!this.down) {
      this.logger.warn({ err: error.message, mode: this.mode }, this.mode === 'local' ? 'rate limits: Redis failed, using local limits' : 'rate limits: Redis failed, refusing requests');
    }
    this.down = true;
  }

  close(): void {
    this.shared.close?.();
    this.local.close?.();
  }
}
