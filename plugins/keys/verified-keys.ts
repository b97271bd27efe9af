// The durable KeyStore the auth step asks after the bootstrap key. Verifying costs no database
// round trip per request: what a lookup found (a key, or that no key has this secret) is kept in
// memory, bounded, by the secret's hash. While this replica hears key changes through Redis
// (invalidation.ts) an entry lives until a change drops it (a minute at most); without that channel
// it lives FALLBACK_TTL_MS (750 ms), so a change made on another replica applies within a second either way.
// Changes made here drop the entry at once. Unknown secrets are cached too (negative cache), and
// lookups that do reach the database are limited in number, so a flood of random keys costs the
// database a bounded amount of work; what is over the limit is answered 503 with Retry-After.
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { GatewayError } from '../../core/errors.js';
import type { KeyRecord, KeyStore } from '../../core/key-store.js';
import { parseAllowed, parseLimits, type KeyRow, type KeyRows } from './key-rows.js';
import { SECRET_SHAPE, type Pepper } from './secrets.js';

/** How long an entry is trusted while no change channel is heard (Redis off or away): with the lookup that follows, a change is seen within a second. */
export const FALLBACK_TTL_MS = 750;
/** …and while one is: a lost message costs a minute at most. */
const SUBSCRIBED_TTL_MS = 60_000;
const MAX_VERIFIED = 10_000;
const MAX_UNKNOWN = 10_000;
/** Database lookups in flight at once, and waiting for one. */
const MAX_LOOKUPS = 8;
const MAX_WAITING = 256;
/** Lookups kept for secrets this replica has verified before (their cache entry aged out): a flood of random secrets cannot shut valid keys out. */
const RESERVED_FOR_KNOWN = 4;

interface Entry {
  /** Undefined: no usable key has this secret (unknown, revoked). */
  record: KeyRecord | undefined;
  keyId: string | undefined;
  version: number;
  at: number;
}

export interface VerifiedKeysOptions {
  rows: KeyRows;
  pepper: Pepper;
  logger: Logger;
  /** Whether changes made elsewhere are heard right now (the Redis channel is subscribed). */
  subscribed(): boolean;
  /** Called with each key a request used (the last-used writer). */
  used(keyId: string): void;
}

/** The principal a row stands for, as the auth step wants it; undefined for a revoked key. */
export function recordOf(row: KeyRow, previous: boolean): KeyRecord | undefined {
  if (row.status !== 'active') return undefined;
  const limits = parseLimits(row);
  const allowed = parseAllowed(row);
  // The replaced secret expires at the end of its grace, or with the key, whichever comes first.
  const ends = [row.expires_at, previous ? row.previous_expires_at : null].filter((value): value is number => value !== null);
  return {
    keyId: row.id,
    tenant: row.owner,
    // A replaced admin secret still serves requests during its grace, but no longer administers:
    // regenerating a leaked admin key must stop its holder from making keys at once.
    admin: row.admin === 1 && !previous,
    ...(limits ? { limits } : {}),
    ...(allowed ? { allowedModels: allowed } : {}),
    ...(ends.length > 0 ? { expiresAt: Math.min(...ends) } : {}),
  };
}

export class VerifiedKeys implements KeyStore {
  private readonly known = new LRUCache<string, Entry>({ max: MAX_VERIFIED });
  private readonly unknown = new LRUCache<string, Entry>({ max: MAX_UNKNOWN });
  /** The hashes cached per key id, to drop a key's entries when it changes. */
  private readonly hashesOf = new Map<string, Set<string>>();
  private readonly inFlight = new Map<string, Promise<Entry>>();
  private lookups = 0;
  private readonly waiting: Array<() => void> = [];
  /** Re-checks of known secrets waiting: served first (at most one per known secret). */
  private readonly knownWaiting: Array<() => void> = [];
  /** Raised by every invalidation: a lookup that straddles one does not cache what it read. */
  private generation = 0;
  /** Lookups that reached the database, since the start. */
  reads = 0;

  constructor(private readonly options: VerifiedKeysOptions) {}

  /** Entries held now (both caches), for tests and metrics. */
  get size(): { known: number; unknown: number } {
    return { known: this.known.size, unknown: this.unknown.size };
  }

  async verify(secret: string): Promise<KeyRecord | undefined> {
    if (!SECRET_SHAPE.test(secret)) return undefined;
    const hash = this.options.pepper.hash(secret);
    const entry = this.fresh(this.known.get(hash)) ?? this.fresh(this.unknown.get(hash)) ?? (await this.lookUp(hash));
    if (entry.record) this.options.used(entry.record.keyId);
    return entry.record;
  }

  /** Drops what is cached of key `id` older than `version` (every version when omitted). */
  invalidate(id: string, version = Number.MAX_SAFE_INTEGER): void {
    this.generation++;
    const hashes = this.hashesOf.get(id);
    if (!hashes) return;
    for (const hash of hashes) {
      const entry = this.known.peek(hash) ?? this.unknown.peek(hash);
      if (entry && entry.version < version) {
        this.known.delete(hash);
        this.unknown.delete(hash);
        hashes.delete(hash);
      }
    }
    if (hashes.size === 0) this.hashesOf.delete(id);
  }

  /** Forgets everything: the change channel was lost, so changes may have been missed. */
  clear(): void {
    this.generation++;
    this.known.clear();
    this.unknown.clear();
    this.hashesOf.clear();
  }

  private fresh(entry: Entry | undefined): Entry | undefined {
    if (!entry) return undefined;
    const ttl = this.options.subscribed() ? SUBSCRIBED_TTL_MS : FALLBACK_TTL_MS;
    return Date.now() - entry.at < ttl ? entry : undefined;
  }

  private lookUp(hash: string): Promise<Entry> {
    let pending = this.inFlight.get(hash);
    if (!pending) {
      pending = this.read(hash).finally(() => this.inFlight.delete(hash));
      this.inFlight.set(hash, pending);
    }
    return pending;
  }

  private async read(hash: string): Promise<Entry> {
    await this.slot(this.known.has(hash));
    const generation = this.generation;
    let found: Awaited<ReturnType<KeyRows['byHash']>>;
    try {
      this.reads++;
      found = await this.options.rows.byHash(hash);
    } catch (error) {
      this.options.logger.warn({ err: (error as Error).message }, 'keys: the database did not answer a key lookup');
      throw new GatewayError('store_unavailable', { headers: { 'retry-after': '1' } });
    } finally {
      this.release();
    }
    const entry: Entry = { record: found && recordOf(found.row, found.previous), keyId: found?.row.id, version: found?.row.version ?? 0, at: Date.now() };
    if (generation === this.generation) this.remember(hash, entry);
    return entry;
  }

  private remember(hash: string, entry: Entry): void {
    (entry.record ? this.known : this.unknown).set(hash, entry);
    if (entry.keyId === undefined) return;
    let hashes = this.hashesOf.get(entry.keyId);
    if (!hashes) this.hashesOf.set(entry.keyId, (hashes = new Set()));
    hashes.add(hash);
    // Bounded with the caches: ids whose entries were all evicted are let go.
    if (this.hashesOf.size > MAX_VERIFIED + MAX_UNKNOWN) this.pruneIds();
  }

  private pruneIds(): void {
    for (const [id, hashes] of this.hashesOf) {
      for (const hash of hashes) if (!this.known.has(hash) && !this.unknown.has(hash)) hashes.delete(hash);
      if (hashes.size === 0) this.hashesOf.delete(id);
    }
  }

  private slot(known: boolean): Promise<void> {
    if (this.lookups < MAX_LOOKUPS || (known && this.lookups < MAX_LOOKUPS + RESERVED_FOR_KNOWN)) {
      this.lookups++;
      return Promise.resolve();
    }
    if (known) return new Promise((resolve) => this.knownWaiting.push(resolve));
    if (this.waiting.length >= MAX_WAITING) {
      return Promise.reject(new GatewayError('store_unavailable', { message: 'Too many unknown keys are being checked; retry shortly', headers: { 'retry-after': '1' } }));
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.knownWaiting.shift() ?? (this.lookups <= MAX_LOOKUPS ? this.waiting.shift() : undefined);
    if (next) next();
    else this.lookups--;
  }
}
