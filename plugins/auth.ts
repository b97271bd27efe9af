// Auth: refuses requests without a valid `Authorization: Bearer <key>` (401 Invalid API key, or
// API key expired) and sets ctx.principal. Keys are looked up in a KeyStore; the bootstrap key
// MODELGATE_API_KEY is compared in constant time. A request without the header may instead carry the
// dashboard's session cookie (core/sessions.ts): it stands for the key that signed in, and a change
// made with it (any method but GET/HEAD/OPTIONS) must carry the session's CSRF token or is refused
// 403 csrf_failed. Reads MODELGATE_API_KEY.
import { hash, timingSafeEqual } from 'node:crypto';
import { defineSettings, type SettingsOf } from '../core/settings.js';
import { GatewayError } from '../core/errors.js';
import type { KeyRecord, KeyStore } from '../core/key-store.js';
import type { PluginModule } from '../core/pipeline.js';
import type { RequestContext } from '../core/context.js';
import { CSRF_HEADER, SAFE_METHODS, csrfMatches, sessionToken, type SessionBoard } from '../core/sessions.js';

const settings = defineSettings({
  MODELGATE_API_KEY: {
    type: 'string',
    required: true,
    pattern: '^uc_\\S+$',
    hint: 'begin with uc_ (and contain no spaces)',
    secret: true,
    variants: ['dev', 'staging', 'prod'],
    description: 'The bootstrap admin API key clients send as `Authorization: Bearer <key>`. Required; begins with uc_.',
  },
});

// One-shot hashing (Node 20.12+): no Hash object per request.
const sha256 = (value: string) => hash('sha256', value, 'buffer');

/**
 * Compares candidates with one fixed secret in constant time: both are hashed first, so neither
 * the secret's length nor where a guess goes wrong shows in the timing.
 */
export function secretMatcher(secret: string): (candidate: string) => boolean {
  const expected = sha256(secret);
  return (candidate) => timingSafeEqual(sha256(candidate), expected);
}

/** Holds the bootstrap admin key, compared by hash in constant time. */
export function bootstrapKeyStore(key: string): KeyStore {
  const matches = secretMatcher(key);
  const record: KeyRecord = { keyId: 'bootstrap', tenant: 'default', admin: true };
  return { verify: (secret) => (matches(secret) ? record : undefined) };
}

const BEARER = /^Bearer +(\S+) *$/i;

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive); undefined otherwise. */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined;
}

function refuse(kind: 'invalid_api_key' | 'api_key_expired'): GatewayError {
  const error = kind === 'invalid_api_key' ? 'invalid_token' : 'invalid_token", error_description="expired';
  return new GatewayError(kind, { headers: { 'www-authenticate': `Bearer realm="modelgate", error="${error}"` } });
}

/** A request signed in by the dashboard's session cookie, or refused as one without a key. */
async function signedIn(ctx: RequestContext, sessions: SessionBoard): Promise<void> {
  const token = sessionToken(ctx.headers.cookie);
  let session;
  try {
    session = token === undefined ? undefined : await sessions.principal(token);
  } catch (error) {
    ctx.log.warn({ err: (error as Error).message }, 'auth: the database failed a session lookup');
    throw new GatewayError('store_unavailable', { headers: { 'retry-after': '1' }, cause: error });
  }
  if (!session) throw refuse('invalid_api_key');
  if (!SAFE_METHODS.has(ctx.method) && !csrfMatches(ctx.headers[CSRF_HEADER], session.csrf)) throw new GatewayError('csrf_failed');
  const record = session.record;
  ctx.principal = { keyId: record.keyId, tenant: record.tenant, admin: record.admin, limits: record.limits, allowedModels: record.allowedModels };
}

export const auth: PluginModule<typeof settings> = {
  name: 'auth',
  settings,
  create(values, deps) {
    const s = values as SettingsOf<typeof settings>;
    const stores = [bootstrapKeyStore(s.MODELGATE_API_KEY), ...deps.keyStores];
    const bySession = async (ctx: RequestContext, next: () => Promise<void>) => {
      await signedIn(ctx, deps.sessions);
      return next();
    };
    return {
      name: 'auth',
      step: {
        name: 'auth',
        async handle(ctx, next) {
          const token = bearerToken(ctx.headers.authorization);
          if (token === undefined) {
            if (ctx.headers.authorization !== undefined) throw refuse('invalid_api_key');
            return bySession(ctx, next);
          }
          let record: KeyRecord | undefined;
          for (const store of stores) {
            record = await store.verify(token);
            if (record) break;
          }
          if (!record) throw refuse('invalid_api_key');
          if (record.expiresAt !== undefined && record.expiresAt <= Date.now()) throw refuse('api_key_expired');
          ctx.principal = { keyId: record.keyId, tenant: record.tenant, admin: record.admin, limits: record.limits, allowedModels: record.allowedModels };
          return next();
        },
      },
    };
  },
};
