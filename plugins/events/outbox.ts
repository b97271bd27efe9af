// The outbox: every delivery (one event to one destination) is a row that waits here until a
// receiver took it. A replica claims due rows with one statement — `FOR UPDATE SKIP LOCKED` on
// PostgreSQL, so replicas claiming together take different rows; SQLite has one writer — and holds
// them under a lease: a replica that dies mid-delivery lets the lease lapse, and another delivers
// (at least once, with the same event id, so receivers can deduplicate).
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Store } from '../../core/store/database.js';
import type { EventOutboxTable } from '../../core/store/schema.js';
import type { AttemptResult, Channel } from './types.js';

export type Delivery = EventOutboxTable;

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'skipped'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface NewDelivery {
  eventId: string;
  eventType: string;
  channel: Channel;
  endpointId: string | null;
  payload: string;
  createdAt: number;
}

/** How a failed attempt ends: retried at `nextAt`, or given up (`failed`). */
export type FailedOutcome = { retryAt: number } | { giveUp: true };

export const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

/** Error texts kept per attempt are bounded (a receiver's message is never stored whole). */
const MAX_ERROR = 300;
/** Deliveries read per query when looking for the latest events. */
const LATEST_PAGE = 500;

export class Outbox {
  constructor(private readonly store: Store) {}

  async add(deliveries: readonly NewDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    await this.store.db
      .insertInto('event_outbox')
      .values(
        deliveries.map((d) => newDelivery({ event_id: d.eventId, event_type: d.eventType, channel: d.channel, endpoint_id: d.endpointId, payload: d.payload }, d.createdAt, null)),
      )
      .execute();
  }

  /** Claims up to `limit` due deliveries for `holder` until `now + leaseMs`, oldest due first. */
  async claim(holder: string, limit: number, leaseMs: number, now = Date.now()): Promise<Delivery[]> {
    // PostgreSQL: the due rows are chosen (and locked) once, in a materialized step, then updated by
    // id — an index lookup however large the outbox; SQLite has one writer and plans the same.
    const { rows } =
      this.store.engine === 'postgres'
        ? await sql<Delivery>`
            with due as materialized (
              select id from event_outbox
              where status = 'pending' and next_attempt_at <= ${now} and lease_until <= ${now}
              order by next_attempt_at limit ${limit} for update skip locked
            )
            update event_outbox set lease_until = ${now + leaseMs}, lease_holder = ${holder}
            from due where event_outbox.id = due.id
            returning event_outbox.*`.execute(this.store.db)
        : await sql<Delivery>`
            update event_outbox set lease_until = ${now + leaseMs}, lease_holder = ${holder}
            where id in (
              select id from event_outbox
              where status = 'pending' and next_attempt_at <= ${now} and lease_until <= ${now}
              order by next_attempt_at limit ${limit}
            )
            returning *`.execute(this.store.db);
    return rows.map(numbers).sort((a, b) => a.next_attempt_at - b.next_attempt_at);
  }

  /**
   * Extends `holder`'s claim on a delivery it is about to make to `now + leaseMs`; false if the claim
   * lapsed (another replica may be making it), so it is not made twice.
   */
  async renew(delivery: Delivery, holder: string, leaseMs: number, now = Date.now()): Promise<boolean> {
    const result = await this.store.db
      .updateTable('event_outbox')
      .set({ lease_until: now + leaseMs })
      .where('id', '=', delivery.id)
      .where('lease_holder', '=', holder)
      .where('lease_until', '>', now)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Gives back claims on deliveries not started (a replica stopping): others take them at once. */
  async release(ids: readonly string[], holder: string): Promise<void> {
    if (ids.length === 0) return;
    await this.store.db.updateTable('event_outbox').set({ lease_until: 0 }).where('id', 'in', ids).where('lease_holder', '=', holder).where('status', '=', 'pending').execute();
  }

  /** Records a delivered attempt, if `holder` still holds the claim. */
  delivered(delivery: Delivery, holder: string, attempt: AttemptResult, now = Date.now()): Promise<void> {
    return this.finish(delivery, holder, attempt, null, { status: 'delivered', delivered_at: now }, now);
  }

  /** Records a failed attempt and when (whether) the delivery is tried again. */
  failed(delivery: Delivery, holder: string, attempt: AttemptResult, error: string, outcome: FailedOutcome, now = Date.now()): Promise<void> {
    const next = 'giveUp' in outcome ? { status: 'failed' } : { status: 'pending', next_attempt_at: outcome.retryAt };
    return this.finish(delivery, holder, attempt, error.slice(0, MAX_ERROR), next, now);
  }

  /** An attempt's outcome on the delivery (if `holder` still holds it) and in the attempt log, together. */
  private async finish(delivery: Delivery, holder: string, attempt: AttemptResult, error: string | null, next: Partial<Delivery>, now: number): Promise<void> {
    await this.store.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('event_outbox')
        .set({
          ...next,
          attempts: delivery.attempts + 1,
          lease_until: 0,
          last_status_code: attempt.statusCode,
          last_latency_ms: Math.round(attempt.latencyMs),
          last_error: error,
        })
        .where('id', '=', delivery.id)
        .where('lease_holder', '=', holder)
        .execute();
      await trx.insertInto('event_delivery_attempts').values(attemptRow(delivery.id, now, error === null, attempt, error)).execute();
    });
  }

  /** A delivery that will never be attempted (its endpoint is gone or disabled). */
  async skip(delivery: Delivery, holder: string, reason: string): Promise<void> {
    await this.store.db
      .updateTable('event_outbox')
      .set({ status: 'skipped', lease_until: 0, last_error: reason })
      .where('id', '=', delivery.id)
      .where('lease_holder', '=', holder)
      .execute();
  }

  /** Pending deliveries of an endpoint that no longer takes any (disabled, deleted) are skipped. */
  async skipPending(endpointId: string, reason: string): Promise<void> {
    await this.store.db.updateTable('event_outbox').set({ status: 'skipped', last_error: reason }).where('endpoint_id', '=', endpointId).where('status', '=', 'pending').execute();
  }

  async get(id: string): Promise<Delivery | undefined> {
    const row = await this.store.db.selectFrom('event_outbox').selectAll().where('id', '=', id).executeTakeFirst();
    return row && numbers(row);
  }

  /** An endpoint's deliveries, newest first, `after` a delivery id (the cursor), only those in `status` when given. */
  async list(endpointId: string, limit: number, after?: Delivery, status?: DeliveryStatus): Promise<Delivery[]> {
    let query = this.store.db.selectFrom('event_outbox').selectAll().where('endpoint_id', '=', endpointId);
    if (status) query = query.where('status', '=', status);
    if (after) {
      query = query.where((eb) => eb.or([eb('created_at', '<', after.created_at), eb.and([eb('created_at', '=', after.created_at), eb('id', '<', after.id)])]));
    }
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return rows.map(numbers);
  }

  /** The attempts of deliveries, oldest first per delivery. */
  async attempts(deliveryIds: readonly string[]): Promise<Map<string, AttemptRecord[]>> {
    const out = new Map<string, AttemptRecord[]>();
    if (deliveryIds.length === 0) return out;
    const rows = await this.store.db.selectFrom('event_delivery_attempts').selectAll().where('delivery_id', 'in', deliveryIds).orderBy('at').execute();
    for (const row of rows) {
      const list = out.get(row.delivery_id) ?? [];
      list.push({ at: Number(row.at), ok: Number(row.ok) === 1, statusCode: row.status_code, latencyMs: Number(row.latency_ms), error: row.error });
      out.set(row.delivery_id, list);
    }
    return out;
  }

  /** Whether a replay of the delivery `id` is still pending. */
  async pendingReplay(id: string): Promise<boolean> {
    const row = await this.store.db.selectFrom('event_outbox').select('id').where('replay_of', '=', id).where('status', '=', 'pending').executeTakeFirst();
    return row !== undefined;
  }

  /** A new delivery of `original`'s event to the same destination, with the same event id; due now. */
  async replay(original: Delivery, now = Date.now()): Promise<Delivery> {
    const row = newDelivery(original, now, original.id);
    await this.store.db.insertInto('event_outbox').values(row).execute();
    return row;
  }

  /**
   * The latest events of `types` the outbox holds (those that had a destination; retention sweeps
   * them), newest first, each once with the channels it was queued to — replays left out. The
   * deliveries of one event share its created_at, so they come together in this order.
   */
  async latestEvents(types: readonly string[], limit: number): Promise<OutboxEvent[]> {
    const found: OutboxEvent[] = [];
    if (types.length === 0) return found;
    let after: { created_at: number; id: string } | undefined;
    for (;;) {
      let query = this.store.db
        .selectFrom('event_outbox')
        .select(['id', 'event_id', 'event_type', 'channel', 'payload', 'created_at'])
        .where('event_type', 'in', types)
        .where('replay_of', 'is', null);
      if (after) {
        const { created_at, id } = after;
        query = query.where((eb) => eb.or([eb('created_at', '<', created_at), eb.and([eb('created_at', '=', created_at), eb('id', '<', id)])]));
      }
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(LATEST_PAGE).execute();
      for (const row of rows) {
        const same = found.find((event) => event.eventId === row.event_id);
        if (same) {
          if (!same.channels.includes(row.channel as Channel)) same.channels.push(row.channel as Channel);
          continue;
        }
        if (found.length === limit) {
          // A further event older than the last one kept: every delivery of the kept ones was read.
          if (Number(row.created_at) < found.at(-1)!.createdAt) return found;
          continue;
        }
        found.push({ eventId: row.event_id, eventType: row.event_type, payload: row.payload, createdAt: Number(row.created_at), channels: [row.channel as Channel] });
      }
      if (rows.length < LATEST_PAGE) return found;
      const last = rows.at(-1)!;
      after = { created_at: Number(last.created_at), id: last.id };
    }
  }

  /** Deliveries still to make (for the metrics and the shutdown log). */
  async pending(): Promise<number> {
    const row = await this.store.db.selectFrom('event_outbox').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'pending').executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Removes finished deliveries (and their attempts) created before `cutoff`, one batch per call. */
  async sweep(cutoff: number, batch = 1000): Promise<number> {
    const ids = await this.store.db
      .selectFrom('event_outbox')
      .select('id')
      .where('created_at', '<', cutoff)
      .where('status', '!=', 'pending')
      .limit(batch)
      .execute();
    if (ids.length === 0) return 0;
    const list = ids.map((r) => r.id);
    await this.store.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('event_delivery_attempts').where('delivery_id', 'in', list).execute();
      await trx.deleteFrom('event_outbox').where('id', 'in', list).execute();
    });
    return list.length;
  }
}

/** An event as the outbox holds it: its message, and where it was queued to. */
export interface OutboxEvent {
  eventId: string;
  eventType: string;
  /** The message as sent: JSON `{type, timestamp, data}`. */
  payload: string;
  createdAt: number;
  channels: Channel[];
}

export interface AttemptRecord {
  at: number;
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}

/** A delivery of an event to a destination, due at `at`, never attempted. */
function newDelivery(what: Pick<Delivery, 'event_id' | 'event_type' | 'channel' | 'endpoint_id' | 'payload'>, at: number, replayOf: string | null): Delivery {
  return {
    id: newId('dlv'),
    event_id: what.event_id,
    event_type: what.event_type,
    channel: what.channel,
    endpoint_id: what.endpoint_id,
    payload: what.payload,
    created_at: at,
    status: 'pending',
    attempts: 0,
    next_attempt_at: at,
    lease_until: 0,
    lease_holder: null,
    last_status_code: null,
    last_latency_ms: null,
    last_error: null,
    delivered_at: null,
    replay_of: replayOf,
  };
}

function attemptRow(deliveryId: string, at: number, ok: boolean, attempt: AttemptResult, error: string | null) {
  return { id: newId('att'), delivery_id: deliveryId, at, ok: ok ? 1 : 0, status_code: attempt.statusCode, latency_ms: Math.round(attempt.latencyMs), error };
}

/** BIGINT columns read back as numbers on both engines (SQLite may hand back bigint-ish values as numbers already). */
function numbers(row: Delivery): Delivery {
  return {
    ...row,
    created_at: Number(row.created_at),
    attempts: Number(row.attempts),
    next_attempt_at: Number(row.next_attempt_at),
    lease_until: Number(row.lease_until),
    delivered_at: row.delivered_at === null ? null : Number(row.delivered_at),
    last_status_code: row.last_status_code === null ? null : Number(row.last_status_code),
    last_latency_ms: row.last_latency_ms === null ? null : Number(row.last_latency_ms),
  };
}
