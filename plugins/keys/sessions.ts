// Dashboard sessions: an API key exchanged once for a random token kept in an HttpOnly cookie, so the
// browser never holds the key. A row per session, found by the token's SHA-256 (the database never
// sees a token), holding the keyed hash of the very secret signed in with: the session stands exactly
// as long as that secret would — a revoke, an expiry or a regenerate (past the old secret's grace,
// which also takes admin rights away at once) ends it, and so does a new MODELGATE_API_KEY for the
// bootstrap key's sessions. Sessions also end at expires_at (MODELGATE_DASHBOARD_SESSION_TTL, which the
// dashboard plugin passes) or at sign-out; a key keeps at most MAX_PER_KEY, the oldest making way. Every use reads the row and the
// key: a change made on any replica applies to the very next request.
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { KeyRecord } from '../../core/key-store.js';
import type { Described, SessionPrincipal, SessionSource, SignIn } from '../../core/sessions.js';
import type { Tables } from '../../core/store/schema.js';
import { secretMatcher } from '../auth.js';
import type { KeyRows } from './key-rows.js';
import { SECRET_SHAPE, type Pepper } from './secrets.js';
import { recordOf } from './verified-keys.js';

/** Live sessions one key may hold; a new one past this ends the oldest. */
export const MAX_PER_KEY = 20;
const BOOTSTRAP_ID = 'bootstrap';
const BOOTSTRAP: KeyRecord = { keyId: BOOTSTRAP_ID, tenant: 'default', admin: true };

const digest = (token: string) => createHash('sha256').update(token).digest('hex');

export class DashboardSessions implements SessionSource {
  private readonly isBootstrap: (secret: string) => boolean;
  private readonly bootstrapHash: string;

  constructor(
    private readonly db: Kysely<Tables>,
    private readonly rows: KeyRows,
    private readonly pepper: Pepper,
    bootstrapKey: string,
  ) {
    this.isBootstrap = secretMatcher(bootstrapKey);
    this.bootstrapHash = pepper.hash(bootstrapKey);
  }

  /** Verifies the key as the auth step would, then opens a session for it. */
  async open(secret: string, ttlMs: number, now = Date.now()): Promise<SignIn> {
    let keyId: string;
    let keyHash: string;
    let record: KeyRecord | undefined;
    let name: string | null = null;
    if (this.isBootstrap(secret)) {
      keyId = BOOTSTRAP_ID;
      keyHash = this.bootstrapHash;
      record = BOOTSTRAP;
    } else {
      if (!SECRET_SHAPE.test(secret)) return { ok: false, reason: 'invalid_api_key' };
      keyHash = this.pepper.hash(secret);
      const found = await this.rows.byHash(keyHash);
      record = found && recordOf(found.row, found.previous);
      if (!found || !record) return { ok: false, reason: 'invalid_api_key' };
      keyId = found.row.id;
      name = found.row.name;
    }
    if (record.expiresAt !== undefined && record.expiresAt <= now) return { ok: false, reason: 'api_key_expired' };
    const token = randomBytes(32).toString('base64url');
    const csrf = randomBytes(32).toString('base64url');
    // Never past the key's own end: a session is not a way to outlive a key.
    const expiresAt = Math.min(now + ttlMs, record.expiresAt ?? Infinity);
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('dashboard_sessions').where('expires_at', '<=', now).execute();
      await trx.insertInto('dashboard_sessions').values({ id: digest(token), key_id: keyId, key_hash: keyHash, csrf, created_at: now, expires_at: expiresAt }).execute();
      const kept = trx.selectFrom('dashboard_sessions').select('id').where('key_id', '=', keyId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(MAX_PER_KEY);
      await trx.deleteFrom('dashboard_sessions').where('key_id', '=', keyId).where('id', 'not in', kept).execute();
    });
    return { ok: true, opened: { token, csrf, record, name, expiresAt } };
  }

  async principal(token: string, now = Date.now()): Promise<SessionPrincipal | undefined> {
    return (await this.describe(token, now))?.principal;
  }

  /** The live session's principal and the name of its key (for the page to show). */
  async describe(token: string, now = Date.now()): Promise<Described | undefined> {
    const session = await this.db.selectFrom('dashboard_sessions').selectAll().where('id', '=', digest(token)).executeTakeFirst();
    if (!session || Number(session.expires_at) <= now) return undefined;
    const key = await this.keyFor(session.key_id, session.key_hash);
    if (!key || (key.record.expiresAt !== undefined && key.record.expiresAt <= now)) return undefined;
    return { principal: { record: key.record, csrf: session.csrf, expiresAt: Number(session.expires_at) }, name: key.name };
  }

  /** Ends the session; whether there was one. */
  async close(token: string): Promise<boolean> {
    const result = await this.db.deleteFrom('dashboard_sessions').where('id', '=', digest(token)).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** What the key signed in with stands for now: undefined once that secret no longer works. */
  private async keyFor(keyId: string, keyHash: string): Promise<{ record: KeyRecord; name: string | null } | undefined> {
    if (keyId === BOOTSTRAP_ID) return keyHash === this.bootstrapHash ? { record: BOOTSTRAP, name: null } : undefined;
    const row = await this.rows.get(keyId);
    if (!row || (row.hash !== keyHash && row.previous_hash !== keyHash)) return undefined;
    const record = recordOf(row, row.hash !== keyHash);
    return record && { record, name: row.name };
  }
}
