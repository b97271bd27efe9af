// The dashboard's sign-in (outside /v1, beside the pages it serves):
//   POST   /dashboard/session   {"key": "uc_…"} → the session, and its token in an HttpOnly cookie
//   GET    /dashboard/session   the live session (its CSRF token included, for a page reloaded), or 401
//   DELETE /dashboard/session   sign-out: the session ends and the cookie is cleared
// The cookie is HttpOnly, SameSite=Strict, Path=/ (the page calls /v1 with it), Secure whenever the
// request came over TLS (directly, by X-Forwarded-Proto, or as MODELGATE_BASE_URL says). Sign-in
// takes JSON only — a cross-site form cannot send it — and refuses a foreign Origin, so no other site
// can sign a browser in; sign-out needs the CSRF token like every change.
import { TLSSocket } from 'node:tls';
import { readRequestBody } from '../../core/body.js';
import { GatewayError } from '../../core/errors.js';
import type { RequestContext } from '../../core/context.js';
import type { Route } from '../../core/pipeline.js';
import { sendJson } from '../../core/respond.js';
import { CSRF_HEADER, SESSION_COOKIE, csrfMatches, sessionToken, type SessionSource } from '../../core/sessions.js';
import { storeGuarded } from '../../core/store-guard.js';
import { sameOrigin } from '../../core/origin.js';

const BODY_LIMIT = 4 * 1024;
const NO_STORE = { 'cache-control': 'no-store' };

export interface SessionRouteDeps {
  sessions: SessionSource;
  /** MODELGATE_DASHBOARD_SESSION_TTL, in ms. */
  ttlMs: number;
  bodyIdleMs: number;
  /** MODELGATE_BASE_URL: an https one marks the cookie Secure whatever the request says. */
  baseUrl: string | undefined;
}

function secure(ctx: RequestContext, baseUrl: string | undefined): boolean {
  const proto = ctx.headers['x-forwarded-proto'];
  const forwarded = typeof proto === 'string' && proto.split(',')[0]!.trim().toLowerCase() === 'https';
  return ctx.req.socket instanceof TLSSocket || forwarded || baseUrl?.startsWith('https://') === true;
}

function cookie(ctx: RequestContext, deps: SessionRouteDeps, value: string, maxAgeSeconds: number): string {
  return [`${SESSION_COOKIE}=${value}`, 'Path=/', `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Strict', ...(secure(ctx, deps.baseUrl) ? ['Secure'] : [])].join('; ');
}

function sessionBody(keyId: string, name: string | null, admin: boolean, tenant: string, csrf: string, expiresAt: number) {
  return { object: 'dashboard_session', key_id: keyId, name, admin, tenant, csrf_token: csrf, expires_at: new Date(expiresAt).toISOString() };
}

function keyOf(raw: Buffer): string {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new GatewayError('invalid_json');
  }
  const key = (body as { key?: unknown } | null)?.key;
  if (typeof key !== 'string' || key.length === 0 || key.length > 512) throw new GatewayError('bad_request', { param: 'key', message: 'key is required: an API key (uc_…)' });
  return key.trim();
}

export function sessionRoutes(deps: SessionRouteDeps): Route[] {
  const routes: Route[] = [
    {
      method: 'POST',
      path: '/dashboard/session',
      public: true,
      async handle(ctx) {
        const type = ctx.headers['content-type'];
        if (typeof type !== 'string' || !/^application\/json\s*(;|$)/i.test(type)) {
          throw new GatewayError('bad_request', { status: 415, code: 'unsupported_media_type', message: 'Sign-in takes a JSON body: Content-Type: application/json' });
        }
        if (!sameOrigin(ctx)) throw new GatewayError('csrf_failed', { message: 'Sign-in from another site is refused' });
        const key = keyOf(await readRequestBody(ctx.req, { maxBytes: BODY_LIMIT, idleMs: deps.bodyIdleMs }));
        const result = await deps.sessions.open(key, deps.ttlMs);
        if (!result.ok) {
          ctx.log.info('dashboard: sign-in refused');
          throw new GatewayError(result.reason, { headers: { 'www-authenticate': 'Bearer realm="modelgate"' } });
        }
        const { token, csrf, record, name, expiresAt } = result.opened;
        ctx.log.info({ keyId: record.keyId }, 'dashboard: signed in');
        const maxAge = Math.max(0, Math.floor((expiresAt - Date.now()) / 1000));
        sendJson(ctx, 200, sessionBody(record.keyId, name, record.admin, record.tenant, csrf, expiresAt), {
          ...NO_STORE,
          'set-cookie': cookie(ctx, deps, token, maxAge),
        });
      },
    },
    {
      method: 'GET',
      path: '/dashboard/session',
      public: true,
      async handle(ctx) {
        const token = sessionToken(ctx.headers.cookie);
        const described = token === undefined ? undefined : await deps.sessions.describe(token);
        if (!described) throw new GatewayError('session_required');
        const { record, csrf, expiresAt } = described.principal;
        sendJson(ctx, 200, sessionBody(record.keyId, described.name, record.admin, record.tenant, csrf, expiresAt), NO_STORE);
      },
    },
    {
      method: 'DELETE',
      path: '/dashboard/session',
      public: true,
      async handle(ctx) {
        const token = sessionToken(ctx.headers.cookie);
        const described = token === undefined ? undefined : await deps.sessions.describe(token);
        if (described && !csrfMatches(ctx.headers[CSRF_HEADER], described.principal.csrf)) throw new GatewayError('csrf_failed');
        const deleted = token !== undefined && (await deps.sessions.close(token));
        if (described) ctx.log.info({ keyId: described.principal.record.keyId }, 'dashboard: signed out');
        sendJson(ctx, 200, { object: 'dashboard_session', deleted }, { ...NO_STORE, 'set-cookie': cookie(ctx, deps, '', 0) });
      },
    },
  ];
  return routes.map((route) => storeGuarded(route, 'dashboard'));
}
