// Alerts read from live traffic, evaluated every few seconds off the request path: a provider down
// (calls in the last minute and none answered), the gateway's error rate high (5xx share of the last
// five minutes), a circuit breaker opened or closed. Each replica judges its own traffic; the
// shared alert state (core/alert-states.ts) makes one replica send each change, at most once per
// cool-down. Refused requests of the rate limit are counted per key and minute, summed across
// replicas in the database, and sent as one event per key and minute.
import type { Logger } from 'pino';
import type { AlertStates } from '../../core/alert-states.js';
import type { Notification } from '../../core/events.js';
import type { RequestContext } from '../../core/context.js';
import type { Store } from '../../core/store/database.js';

export interface TrafficAlertOptions {
  store: Store;
  states: AlertStates;
  logger: Logger;
  notify(notification: Notification): void;
  /** Provider down, error rate and circuits alert only while MODELGATE_ALERTS_ENABLED. */
  alerts: boolean;
  cooldownMs: number;
  /** Share of 5xx answers that is "high"; 0: not watched. */
  errorRate: number;
  errorRateMinRequests: number;
  tickMs?: number;
}

const SLOT_MS = 5_000;
const DOWN_WINDOW_SLOTS = 12;
const ERROR_WINDOW_SLOTS = 60;
/** The windows the alerts judge, as the settings answer (GET /v1/admin/alerts) states them. */
export const DOWN_WINDOW_SECONDS = (DOWN_WINDOW_SLOTS * SLOT_MS) / 1000;
export const ERROR_WINDOW_SECONDS = (ERROR_WINDOW_SLOTS * SLOT_MS) / 1000;
/** Calls in a minute before "none answered" means down (one failed call is not an outage). */
export const DOWN_MIN_CALLS = 5;
const MINUTE_MS = 60_000;
/** A minute's counts are sent once every replica has had time to add its own. */
const COUNTER_GRACE_MS = 15_000;
/** Keys counted per minute on one replica; past it, refusals of further keys count under `*`. */
const MAX_KEYS_PER_MINUTE = 10_000;

interface Slot {
  at: number;
  requests: number;
  errors: number;
  /** provider → [calls, answered] */
  calls: Map<string, [number, number]>;
}

export class TrafficAlerts {
  private slots: Slot[] = [];
  private refused = new Map<string, number>();
  private refusedMinute = 0;
  private lastError = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;

  constructor(private readonly options: TrafficAlertOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.options.tickMs ?? SLOT_MS).unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.ticking;
    await this.flushRefused(true).catch(() => undefined);
  }

  /** Counts a finished request: cheap, no I/O. */
  observe(ctx: RequestContext, now = Date.now()): void {
    if (ctx.error?.kind === 'rate_limit_exceeded' && ctx.principal) this.countRefused(ctx.principal.keyId, now);
    if (!this.options.alerts) return;
    const slot = this.slot(now);
    slot.requests++;
    if ((ctx.status ?? 0) >= 500) slot.errors++;
    for (const failed of ctx.outcome.failedAttempts) {
      if (failed.reason === 'client_abort') continue;
      this.call(slot, failed.target.provider.name, false);
      this.lastError.set(failed.target.provider.name, `${failed.reason}${failed.upstreamStatus ? ` (HTTP ${failed.upstreamStatus})` : ''}`);
    }
    if (ctx.outcome.target && ctx.outcome.attempts > 0 && ctx.status !== undefined && ctx.status < 400) this.call(slot, ctx.outcome.target.provider.name, true);
  }

  /** A breaker changed on this replica. */
  async circuit(provider: string, state: string, recoveryMs: number): Promise<void> {
    if (!this.options.alerts) return;
    const { states, notify } = this.options;
    try {
      if (state === 'open') {
        if (await states.fire('provider.circuit', provider, this.options.cooldownMs)) notify({ type: 'provider.circuit_opened', data: { provider, recovery_ms: recoveryMs } });
      } else if (state === 'closed') {
        if ((await states.resolve('provider.circuit', provider)) !== undefined) notify({ type: 'provider.circuit_closed', data: { provider } });
      }
    } catch (error) {
      this.options.logger.warn({ err: (error as Error).message, provider }, 'events: circuit alert state not recorded');
    }
  }

  tick(now = Date.now()): Promise<void> {
    this.ticking ??= this.evaluate(now)
      .catch((error: Error) => this.options.logger.warn({ err: error.message }, 'events: traffic alerts not evaluated; tried again shortly'))
      .finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async evaluate(now: number): Promise<void> {
    this.slots = this.slots.filter((slot) => slot.at > now - ERROR_WINDOW_SLOTS * SLOT_MS);
    await this.flushRefused(false, now);
    await this.sendMinutes(now);
    if (!this.options.alerts) return;
    await this.providers(now);
    if (this.options.errorRate > 0) await this.errors(now);
  }

  private async providers(now: number): Promise<void> {
    const { states, notify, cooldownMs } = this.options;
    const totals = new Map<string, [number, number]>();
    for (const slot of this.slots) {
      if (slot.at <= now - DOWN_WINDOW_SLOTS * SLOT_MS) continue;
      for (const [provider, [calls, answered]] of slot.calls) {
        const total = totals.get(provider) ?? [0, 0];
        totals.set(provider, [total[0] + calls, total[1] + answered]);
      }
    }
    const firing = new Set(await states.firing('provider.down'));
    for (const [provider, [calls, answered]] of totals) {
      if (answered === 0 && calls >= DOWN_MIN_CALLS && !firing.has(provider)) {
        if (await states.fire('provider.down', provider, cooldownMs, now)) {
          notify({ type: 'provider.down', data: { provider, failures: calls, window_seconds: DOWN_WINDOW_SECONDS, last_error: this.lastError.get(provider) ?? null } });
        }
      } else if (answered > 0 && firing.has(provider)) {
        const since = await states.resolve('provider.down', provider, now);
        if (since !== undefined) notify({ type: 'provider.recovered', data: { provider, down_since: new Date(since).toISOString() } });
      }
    }
  }

  private async errors(now: number): Promise<void> {
    const { states, notify, cooldownMs, errorRate, errorRateMinRequests } = this.options;
    let requests = 0;
    let errors = 0;
    for (const slot of this.slots) {
      requests += slot.requests;
      errors += slot.errors;
    }
    const rate = requests === 0 ? 0 : errors / requests;
    const data = { error_rate: Math.round(rate * 10_000) / 10_000, threshold: errorRate, requests, errors, window_seconds: ERROR_WINDOW_SECONDS };
    if (requests >= errorRateMinRequests && rate >= errorRate) {
      if (await states.fire('error_rate.high', 'gateway', cooldownMs, now)) notify({ type: 'error_rate.high', data });
    } else if (requests >= errorRateMinRequests && rate < errorRate) {
      // Judged on enough requests only: an idle replica (rate 0 of nothing) must not resolve what a busy one fired.
      const firing = await states.firing('error_rate.high');
      if (firing.length > 0 && (await states.resolve('error_rate.high', 'gateway', now)) !== undefined) notify({ type: 'error_rate.resolved', data });
    }
  }

  private countRefused(keyId: string, now: number): void {
    const minute = now - (now % MINUTE_MS);
    if (minute !== this.refusedMinute && this.refused.size > 0) void this.flushRefused(true, now);
    this.refusedMinute = minute;
    const key = this.refused.has(keyId) || this.refused.size < MAX_KEYS_PER_MINUTE ? keyId : '*';
    this.refused.set(key, (this.refused.get(key) ?? 0) + 1);
  }

  /** Adds this replica's refusals to the shared counters (all of them, or only of minutes over). */
  private async flushRefused(all: boolean, now = Date.now()): Promise<void> {
    if (this.refused.size === 0) return;
    if (!all && this.refusedMinute === now - (now % MINUTE_MS)) return;
    const counts = this.refused;
    const window = this.refusedMinute;
    this.refused = new Map();
    const rows = [...counts].map(([subject, count]) => ({ kind: 'rate_limit.hit', subject, window, count, emitted: 0 }));
    try {
      for (let i = 0; i < rows.length; i += 500) {
        await this.options.store.db
          .insertInto('event_counters')
          .values(rows.slice(i, i + 500))
          .onConflict((conflict) => conflict.columns(['kind', 'subject', 'window']).doUpdateSet((eb) => ({ count: eb('event_counters.count', '+', eb.ref('excluded.count')) })))
          .execute();
      }
    } catch (error) {
      this.options.logger.warn({ err: (error as Error).message }, 'events: refusal counts not recorded; that minute is not reported');
    }
  }

  /** One event per key and minute that is over on every replica; the replica that marks it sends it. */
  private async sendMinutes(now: number): Promise<void> {
    const { store, notify } = this.options;
    const due = await store.db
      .selectFrom('event_counters')
      .selectAll()
      .where('emitted', '=', 0)
      .where('window', '<', now - MINUTE_MS - COUNTER_GRACE_MS)
      .limit(500)
      .execute();
    for (const row of due) {
      const marked = await store.db
        .updateTable('event_counters')
        .set({ emitted: 1 })
        .where('kind', '=', row.kind)
        .where('subject', '=', row.subject)
        .where('window', '=', row.window)
        .where('emitted', '=', 0)
        .executeTakeFirst();
      if (Number(marked.numUpdatedRows) === 0) continue;
      // Counts added after the mark (a replica later than the grace) are not sent: the event says what was known.
      notify({ type: 'rate_limit.hit', data: { key_id: row.subject, minute: new Date(Number(row.window)).toISOString(), refused: Number(row.count) } });
    }
    await store.db.deleteFrom('event_counters').where('emitted', '=', 1).where('window', '<', now - 86_400_000).execute();
  }

  private slot(now: number): Slot {
    const at = now - (now % SLOT_MS);
    let slot = this.slots.at(-1);
    if (!slot || slot.at !== at) {
      slot = { at, requests: 0, errors: 0, calls: new Map() };
      this.slots.push(slot);
      if (this.slots.length > ERROR_WINDOW_SLOTS + 1) this.slots.shift();
    }
    return slot;
  }

  private call(slot: Slot, provider: string, answered: boolean): void {
    const counts = slot.calls.get(provider) ?? [0, 0];
    counts[0]++;
    if (answered) counts[1]++;
    slot.calls.set(provider, counts);
  }
}
