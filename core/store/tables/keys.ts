// API keys of the admin API (plugins/keys/) and what a regenerate with an Idempotency-Key made.
// Part of the store's schema (../schema.ts): epoch-ms times, nano-dollar money, 0/1 flags.

/** An API key (not the bootstrap one): the secret only as HMAC-SHA256(pepper, secret), hex. */
export interface ApiKeyTable {
  /** `key_` + random: never changes, regenerate included (budgets and history hang on it). */
  id: string;
  name: string;
  /** The tenant label: whose usage and cache this key's requests are. */
  owner: string;
  /** The secret's first characters (`uc_AbCd1234`), for humans to tell keys apart. */
  prefix: string;
  hash: string;
  /** The secret a regenerate replaced, accepted until previous_expires_at, then `API key expired`. */
  previous_hash: string | null;
  previous_expires_at: number | null;
  status: 'active' | 'revoked';
  admin: number;
  /** JSON of the admin API's `limits` object; null when the key sets none. */
  limits: string | null;
  /** JSON array of model or provider names; null: every model. */
  allowed_models: string | null;
  created_at: number;
  updated_at: number;
  last_used_at: number | null;
  expires_at: number | null;
  /** Raised by every change: caches drop what they hold of an older version. */
  version: number;
}

/** What a regenerate made with an Idempotency-Key produced, so a retry does not rotate twice. */
export interface ApiKeyIdempotencyTable {
  key_id: string;
  idempotency_key: string;
  /** The hash of the secret it made: a retry gets that secret back only while it is still the key's. */
  hash: string;
  /** The secret, AES-256-GCM under a key derived from the pepper; nulled after a few minutes. */
  sealed_secret: string | null;
  previous_expires_at: number | null;
  created_at: number;
}
