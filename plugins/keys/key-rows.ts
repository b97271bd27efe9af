// The api_keys table, read and written through the typed query layer: the admin API's changes (each
// raises the row's version), the lookup by hash that a cache miss makes, the page of a listing, and
// the batched last-used times. Limits and allowed models travel as JSON text.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { ApiKeyTable, Tables } from '../../core/store/schema.js';
import type { KeyLimits } from '../../core/context.js';
import type { Engine } from '../../core/store/database.js';

export type KeyRow = Selectable<ApiKeyTable>;

export interface NewKey {
  id: string;
  name: string;
  owner: string;
  prefix: string;
  hash: string;
  admin: boolean;
  limits: KeyLimits | null;
  allowedModels: readonly string[] | null;
  expiresAt: number | null;
  now: number;
}

export interface KeyChanges {
  name?: string;
  owner?: string;
  limits?: KeyLimits | null;
  allowedModels?: readonly string[] | null;
  expiresAt?: number | null;
}

export interface ListQuery {
  limit: number;
  after?: string;
  name?: string;
  owner?: string;
  status?: 'active' | 'revoked';
  /** Keys whose prefix begins with this. */
  prefix?: string;
  /** Keys whose name or owner contains this (any case), or whose prefix or id begins with it. */
  search?: string;
  /** Active keys that expire before this epoch ms (and have not yet). */
  expiringBefore?: number;
  now: number;
}

export const parseLimits = (row: KeyRow): KeyLimits | null => (row.limits === null ? null : (JSON.parse(row.limits) as KeyLimits));
export const parseAllowed = (row: KeyRow): string[] | null => (row.allowed_models === null ? null : (JSON.parse(row.allowed_models) as string[]));

/** `%` and `_` are LIKE's wildcards; a prefix search takes them literally. */
const likeEscaped = (value: string) => value.replace(/[\\%_]/g, (c) => `\\${c}`);
const likePrefix = (value: string) => `${likeEscaped(value)}%`;

export class KeyRows {
  constructor(
    private readonly db: Kysely<Tables>,
    private readonly engine: Engine,
  ) {}

  async insert(key: NewKey): Promise<KeyRow> {
    const row: KeyRow = {
      id: key.id,
      name: key.name,
      owner: key.owner,
      prefix: key.prefix,
      hash: key.hash,
      previous_hash: null,
      previous_expires_at: null,
      status: 'active',
      admin: key.admin ? 1 : 0,
      limits: key.limits === null ? null : JSON.stringify(key.limits),
      allowed_models: key.allowedModels === null ? null : JSON.stringify(key.allowedModels),
      created_at: key.now,
      updated_at: key.now,
      last_used_at: null,
      expires_at: key.expiresAt,
      version: 1,
    };
    await this.db.insertInto('api_keys').values(row).execute();
    return row;
  }

  async any(): Promise<boolean> {
    return (await this.db.selectFrom('api_keys').select('id').limit(1).executeTakeFirst()) !== undefined;
  }

  get(id: string): Promise<KeyRow | undefined> {
    return this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The key whose current or previous (in grace) secret has this hash. */
  async byHash(hash: string): Promise<{ row: KeyRow; previous: boolean } | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where((eb) => eb.or([eb('hash', '=', hash), eb('previous_hash', '=', hash)])).executeTakeFirst();
    return row && { row, previous: row.hash !== hash };
  }

  /** One page in id order, and whether more follow. */
  async list(query: ListQuery): Promise<{ rows: KeyRow[]; hasMore: boolean }> {
    let select = this.db.selectFrom('api_keys').selectAll().orderBy('id').limit(query.limit + 1);
    if (query.after !== undefined) select = select.where('id', '>', query.after);
    if (query.name !== undefined) select = select.where('name', '=', query.name);
    if (query.owner !== undefined) select = select.where('owner', '=', query.owner);
    if (query.status !== undefined) select = select.where('status', '=', query.status);
    if (query.prefix !== undefined) {
      // SQLite's LIKE ignores case and skips the index; its binary order makes a range exact instead.
      // PostgreSQL's LIKE respects case, but its collation may not order `_` and `-` bytewise.
      const p = query.prefix;
      select =
        this.engine === 'sqlite'
          ? select.where('prefix', '>=', p).where('prefix', '<', `${p.slice(0, -1)}${String.fromCharCode(p.charCodeAt(p.length - 1) + 1)}`)
          : select.where(sql<boolean>`prefix like ${likePrefix(p)} escape '\\'`);
    }
    if (query.search !== undefined) {
      // A scan in id order that stops at the page's end: on 100,000 keys a few tens of milliseconds
      // at worst (a term nothing matches; test/keys/list-100k.test.ts reports it). SQLite's LIKE ignores ASCII case.
      const contains = `%${likeEscaped(query.search)}%`;
      const like = this.engine === 'sqlite' ? sql.raw('like') : sql.raw('ilike');
      select = select.where(
        sql<boolean>`(name ${like} ${contains} escape '\\' or owner ${like} ${contains} escape '\\' or prefix like ${likePrefix(query.search)} escape '\\' or id like ${likePrefix(query.search)} escape '\\')`,
      );
    }
    if (query.expiringBefore !== undefined) {
      select = select.where('status', '=', 'active').where('expires_at', '>', query.now).where('expires_at', '<=', query.expiringBefore);
    }
    const rows = await select.execute();
    return { rows: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
  }

  /** Active keys expiring in (now, before]: the rotation gauge. */
  async countExpiring(now: number, before: number): Promise<number> {
    const row = await this.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'active')
      .where('expires_at', '>', now)
      .where('expires_at', '<=', before)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Active keys expiring in (now, before], soonest first: for key.expiring_soon. */
  async listExpiring(now: number, before: number, limit: number, after?: { expiresAt: number; id: string }): Promise<KeyRow[]> {
    let query = this.db.selectFrom('api_keys').selectAll().where('status', '=', 'active').where('expires_at', '>', now).where('expires_at', '<=', before);
    if (after) query = query.where((eb) => eb.or([eb('expires_at', '>', after.expiresAt), eb.and([eb('expires_at', '=', after.expiresAt), eb('id', '>', after.id)])]));
    return query.orderBy('expires_at').orderBy('id').limit(limit).execute();
  }

  /** Applies the changes to an active or revoked key; the row after, or undefined for an unknown id. */
  async update(id: string, changes: KeyChanges, now: number): Promise<KeyRow | undefined> {
    const set: Partial<KeyRow> = { updated_at: now };
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.owner !== undefined) set.owner = changes.owner;
    if (changes.limits !== undefined) set.limits = changes.limits === null ? null : JSON.stringify(changes.limits);
    if (changes.allowedModels !== undefined) set.allowed_models = changes.allowedModels === null ? null : JSON.stringify(changes.allowedModels);
    if (changes.expiresAt !== undefined) set.expires_at = changes.expiresAt;
    return this.bump(id, set);
  }

  revoke(id: string, now: number): Promise<KeyRow | undefined> {
    return this.bump(id, { status: 'revoked', updated_at: now, previous_hash: null, previous_expires_at: null });
  }

  /** Replaces the secret; the old one stays valid until `graceEnd`. */
  rotate(id: string, secret: { hash: string; prefix: string }, graceEnd: number, expiresAt: number | null | undefined, now: number, db: Kysely<Tables> = this.db): Promise<KeyRow | undefined> {
    return this.bump(
      id,
      {
        hash: secret.hash,
        prefix: secret.prefix,
        previous_hash: sql<string>`hash` as unknown as string,
        previous_expires_at: graceEnd,
        updated_at: now,
        ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
      },
      db,
    );
  }

  private async bump(id: string, set: Partial<KeyRow>, db: Kysely<Tables> = this.db): Promise<KeyRow | undefined> {
    const result = await db
      .updateTable('api_keys')
      .set({ ...set, version: sql<number>`version + 1` as unknown as number })
      .where('id', '=', id)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return undefined;
    return db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Last-used times, each written only when the stored one is a minute older (replicas write the same key too). */
  async touch(times: ReadonlyMap<string, number>): Promise<void> {
    if (times.size === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const [id, at] of times) {
        await trx
          .updateTable('api_keys')
          .set({ last_used_at: at })
          .where('id', '=', id)
          .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', at - 60_000)]))
          .execute();
      }
    });
  }
}
