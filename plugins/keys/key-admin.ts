// What the admin API does to keys: create, change, revoke and regenerate, each a write to the
// database followed by the invalidation of cached copies (here at once, elsewhere through Redis).
// With rotation on, a key created or regenerated expires after the interval. A regenerate with an
// Idempotency-Key is done once: a retry within IDEMPOTENCY_WINDOW_MS answers what the first call did
// (its secret, kept sealed under the pepper for SECRET_REPLAY_MS), later, or once the key has moved
// on, a 409 — never a second rotation.
import type { Kysely } from 'kysely';
import { GatewayError } from '../../core/errors.js';
import type { Tables } from '../../core/store/schema.js';
import type { KeyChanges, KeyRow, KeyRows } from './key-rows.js';
import { generateSecret, newKeyId, prefixOf, type Pepper } from './secrets.js';

const DAY_MS = 86_400_000;
export const IDEMPOTENCY_WINDOW_MS = DAY_MS;
export const SECRET_REPLAY_MS = 10 * 60_000;
export const MAX_IDEMPOTENCY_KEY = 200;

export interface RotationPolicy {
  enabled: boolean;
  intervalDays: number;
  graceSeconds: number;
}

export interface CreateKey {
  name: string;
  owner?: string;
  admin: boolean;
  limits: KeyChanges['limits'];
  allowedModels: KeyChanges['allowedModels'];
  expiresAt: number | null | undefined;
}

export interface Issued {
  row: KeyRow;
  secret: string;
  previousExpiresAt?: number | null;
}

export class KeyAdmin {
  constructor(
    private readonly db: Kysely<Tables>,
    private readonly rows: KeyRows,
    private readonly pepper: Pepper,
    private readonly rotation: RotationPolicy,
    /** Drops cached copies here and tells the other replicas (and recounts the keys expiring soon). */
    private readonly changed: (row: KeyRow) => Promise<void>,
  ) {}

  /** With rotation on, no key lives longer than the interval from now. */
  private capped(expiresAt: number | null | undefined, now: number): number | null {
    if (!this.rotation.enabled) return expiresAt ?? null;
    const cap = now + this.rotation.intervalDays * DAY_MS;
    return expiresAt === null || expiresAt === undefined ? cap : Math.min(expiresAt, cap);
  }

  async create(key: CreateKey, now = Date.now()): Promise<Issued> {
    const secret = generateSecret();
    const id = newKeyId();
    const row = await this.rows.insert({
      id,
      name: key.name,
      // Without an owner a key is a tenant of its own: it shares no one's cache or usage.
      owner: key.owner ?? id,
      prefix: prefixOf(secret),
      hash: this.pepper.hash(secret),
      admin: key.admin,
      limits: key.limits ?? null,
      allowedModels: key.allowedModels ?? null,
      expiresAt: this.capped(key.expiresAt, now),
      now,
    });
    await this.changed(row);
    return { row, secret };
  }

  async change(id: string, changes: KeyChanges, now = Date.now()): Promise<KeyRow> {
    const row = await this.rows.update(id, { ...changes, ...(changes.expiresAt === undefined ? {} : { expiresAt: this.capped(changes.expiresAt, now) }) }, now);
    if (!row) throw new GatewayError('key_not_found', { param: 'id' });
    await this.changed(row);
    return row;
  }

  async revoke(id: string, now = Date.now()): Promise<KeyRow> {
    const row = await this.rows.revoke(id, now);
    if (!row) throw new GatewayError('key_not_found', { param: 'id' });
    await this.changed(row);
    return row;
  }

  async regenerate(id: string, idempotencyKey: string | undefined, now = Date.now()): Promise<Issued> {
    if (idempotencyKey !== undefined) {
      await this.forgetOld(now);
      const replay = await this.replay(id, idempotencyKey);
      if (replay) return replay;
    }
    const current = await this.rows.get(id);
    if (!current) throw new GatewayError('key_not_found', { param: 'id' });
    if (current.status !== 'active') throw new GatewayError('conflict', { code: 'key_revoked', message: 'A revoked key cannot be regenerated' });
    const secret = generateSecret();
    const hash = this.pepper.hash(secret);
    // The replaced secret lives on for the grace period, but never past its own expiry: regenerating
    // a key that has already expired must not bring its old secret back.
    const graceEnd = Math.min(now + this.rotation.graceSeconds * 1000, current.expires_at ?? Infinity);
    const expiresAt = this.rotation.enabled ? this.capped(null, now) : undefined;
    let row: KeyRow | undefined;
    try {
      row = await this.db.transaction().execute(async (trx) => {
        if (idempotencyKey !== undefined) {
          await trx
            .insertInto('api_key_idempotency')
            .values({ key_id: id, idempotency_key: idempotencyKey, hash, sealed_secret: this.pepper.seal(secret), previous_expires_at: graceEnd, created_at: now })
            .execute();
        }
        return this.rows.rotate(id, { hash, prefix: prefixOf(secret) }, graceEnd, expiresAt, now, trx);
      });
    } catch (error) {
      // Another call with the same Idempotency-Key won the race: answer what it did.
      const replay = idempotencyKey === undefined ? undefined : await this.replay(id, idempotencyKey);
      if (replay) return replay;
      throw error;
    }
    if (!row) throw new GatewayError('key_not_found', { param: 'id' });
    await this.changed(row);
    return { row, secret, previousExpiresAt: graceEnd };
  }

  private async replay(id: string, idempotencyKey: string): Promise<Issued | undefined> {
    const done = await this.db.selectFrom('api_key_idempotency').selectAll().where('key_id', '=', id).where('idempotency_key', '=', idempotencyKey).executeTakeFirst();
    if (!done) return undefined;
    const row = await this.rows.get(id);
    const secret = done.sealed_secret === null ? undefined : this.pepper.open(done.sealed_secret);
    if (!row || row.hash !== done.hash || row.status !== 'active' || secret === undefined) {
      throw new GatewayError('conflict', {
        code: 'idempotency_key_used',
        message: `This Idempotency-Key already regenerated the key; its secret is shown again only within ${SECRET_REPLAY_MS / 60_000} minutes and while it is still the key's. Regenerate with a new Idempotency-Key`,
      });
    }
    return { row, secret, previousExpiresAt: done.previous_expires_at };
  }

  /** Sealed secrets past the replay window are erased; rows past the idempotency window deleted. Run on every regenerate and every minute. */
  async forgetOld(now = Date.now()): Promise<void> {
    await this.db.updateTable('api_key_idempotency').set({ sealed_secret: null }).where('sealed_secret', 'is not', null).where('created_at', '<', now - SECRET_REPLAY_MS).execute();
    await this.db.deleteFrom('api_key_idempotency').where('created_at', '<', now - IDEMPOTENCY_WINDOW_MS).execute();
  }
}
