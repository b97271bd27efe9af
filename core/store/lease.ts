// Leases: a named row saying which replica runs a background job until when. Taking one is a single
// upsert that succeeds only if the lease is free, expired or already ours — the same statement on
// SQLite and PostgreSQL — so one replica at a time runs the job, and a replica that dies lets its
// lease expire for another to take.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Store } from './database.js';

/** This process, as a lease holder. */
export const HOLDER = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

/** Takes (or renews) the lease `name` until `now + ttlMs`; true if this holder has it. */
export async function takeLease(store: Store, name: string, ttlMs: number, holder = HOLDER, now = Date.now()): Promise<boolean> {
  const taken = await store.db
    .insertInto('leases')
    .values({ name, holder, expires_at: now + ttlMs })
    .onConflict((conflict) =>
      conflict
        .column('name')
        .doUpdateSet({ holder, expires_at: now + ttlMs })
        .where((eb) => eb.or([eb('leases.expires_at', '<=', now), eb('leases.holder', '=', holder)])),
    )
    .returning('holder')
    .executeTakeFirst();
  return taken?.holder === holder;
}

/** Gives the lease up early (on shutdown), if this holder has it. */
export async function releaseLease(store: Store, name: string, holder = HOLDER): Promise<void> {
  await store.db.updateTable('leases').set({ expires_at: 0 }).where('name', '=', name).where('holder', '=', holder).execute();
}
