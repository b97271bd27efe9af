// Where API keys are looked up: the contract between the auth plugin, which asks, and the stores
// that answer (the bootstrap key, then the durable key store of plugins/keys/). Core holds it so that the
// pipeline's dependencies can name it without importing a plugin.
import type { Principal } from './context.js';

export interface KeyRecord extends Principal {
  /** Epoch ms after which the key is refused with "API key expired". */
  expiresAt?: number;
}

/** Where keys live: the bootstrap key store is static; plugins/keys/verified-keys.ts is the durable one. */
export interface KeyStore {
  verify(secret: string): Promise<KeyRecord | undefined> | KeyRecord | undefined;
}
