// Dashboard sessions: the contract between the auth step, which accepts a session cookie in place of
// a bearer key, and the keys plugin, which issues sessions for the keys it verifies and says whether
// one still stands (plugins/keys/sessions.ts). Lives in PluginDeps so neither plugin imports the other.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { KeyRecord } from './key-store.js';

/** The cookie the dashboard's session travels in (HttpOnly, SameSite=Strict, Path=/). */
export const SESSION_COOKIE = 'modelgate_session';
/** The header a change made with a session must carry, holding the session's CSRF token. */
export const CSRF_HEADER = 'x-csrf-token';

export interface SessionPrincipal {
  record: KeyRecord;
  /** The session's CSRF token: a request that changes anything must send it back. */
  csrf: string;
  /** Epoch ms the session ends. */
  expiresAt: number;
}

export interface Opened {
  /** The cookie's value: returned once, stored only as its digest. */
  token: string;
  csrf: string;
  record: KeyRecord;
  /** The key's name (null for the bootstrap key). */
  name: string | null;
  expiresAt: number;
}

export type SignIn = { ok: true; opened: Opened } | { ok: false; reason: 'invalid_api_key' | 'api_key_expired' };

export interface Described {
  principal: SessionPrincipal;
  name: string | null;
}

export interface SessionSource {
  /** Verifies the key as the auth step would, then opens a session lasting at most ttlMs (never past the key's end). */
  open(secret: string, ttlMs: number): Promise<SignIn>;
  /** The principal a live session token stands for; undefined for an unknown, ended or expired session, or one whose key no longer stands. */
  principal(token: string): Promise<SessionPrincipal | undefined>;
  /** The principal and the key's name, for the page to show. */
  describe(token: string): Promise<Described | undefined>;
  /** Ends the session; whether there was one. */
  close(token: string): Promise<boolean>;
}

/** Filled by the keys plugin when it runs; without it no key can sign in and no cookie is accepted. */
export class SessionBoard {
  source: SessionSource | undefined;

  provide(source: SessionSource): void {
    this.source = source;
  }

  principal(token: string): Promise<SessionPrincipal | undefined> {
    return this.source ? this.source.principal(token) : Promise.resolve(undefined);
  }
}

/** The session token of a Cookie header, if it holds one of a plausible shape. */
export function sessionToken(cookie: string | undefined): string | undefined {
  if (cookie === undefined || cookie.length > 8192) return undefined;
  for (const part of cookie.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === SESSION_COOKIE) {
      const value = part.slice(at + 1).trim();
      return /^[A-Za-z0-9_-]{43}$/.test(value) ? value : undefined;
    }
  }
  return undefined;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Whether a request's x-csrf-token header is the session's token (compared in constant time). */
export function csrfMatches(header: string | string[] | undefined, expected: string): boolean {
  return typeof header === 'string' && timingSafeEqual(digest(header), digest(expected));
}

/** Methods that change nothing: the only ones a session may use without its CSRF token. */
export const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);
