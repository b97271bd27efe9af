// Extra API keys for a test gateway: a small in-test KeyStore (createApp's `keyStores`) that knows
// the keys it is given, each with its own id, tenant, limits and allowed models.
import type { KeyRecord, KeyStore } from '../../core/key-store.js';

export type TestKey = Omit<KeyRecord, 'keyId' | 'tenant' | 'admin'> & Partial<Pick<KeyRecord, 'tenant' | 'admin'>>;

/** Keys by secret (`uc_…`); each key's id is its secret without `uc_`, its tenant `tenant-<id>` unless given. */
export function keyStore(keys: Record<string, TestKey>): KeyStore {
  const records = new Map<string, KeyRecord>();
  for (const [secret, key] of Object.entries(keys)) {
    const keyId = secret.replace(/^uc_/, '');
    records.set(secret, { keyId, tenant: `tenant-${keyId}`, admin: false, ...key });
  }
  return { verify: (secret) => records.get(secret) };
}
