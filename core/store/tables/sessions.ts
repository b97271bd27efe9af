// Dashboard sessions (plugins/keys/sessions.ts). Part of the store's schema (../schema.ts): epoch-ms times.

/** A signed-in dashboard: the cookie's token only as its SHA-256, never in the clear. */
export interface DashboardSessionTable {
  /** SHA-256 of the session token, hex. */
  id: string;
  /** The key signed in with (`bootstrap` for MODELGATE_API_KEY). */
  key_id: string;
  /** The keyed hash (the pepper's) of the secret signed in with: a regenerate or a new bootstrap key ends the session, as it ends that secret. */
  key_hash: string;
  /** The CSRF token changes must carry. */
  csrf: string;
  created_at: number;
  expires_at: number;
}
