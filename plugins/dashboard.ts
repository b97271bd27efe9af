// Dashboard: the web pages at /dashboard (built from dashboard/ into each build, served from memory)
// and their sign-in at /dashboard/session, which exchanges an API key for a session cookie the
// auth step accepts (core/sessions.ts; the keys plugin keeps the sessions). The pages use the
// documented API and nothing else. Every answer here carries a strict Content-Security-Policy (scripts
// and styles from the gateway only, nothing inline, no framing) and the other security headers.
// Reads MODELGATE_DASHBOARD_ENABLED and MODELGATE_DASHBOARD_SESSION_TTL (and MODELGATE_BASE_URL,
// MODELGATE_BODY_IDLE_TIMEOUT, declared elsewhere).
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineSettings, type SettingsOf } from '../core/settings.js';
import { GatewayError } from '../core/errors.js';
import type { RequestContext } from '../core/context.js';
import type { PluginModule, Route } from '../core/pipeline.js';
import { baseHeaders } from '../core/respond.js';
import { sessionRoutes } from './dashboard/session-routes.js';
import { dashboardDir, encodingFor, loadDashboard, type StaticFile } from './dashboard/static-files.js';

const settings = defineSettings({
  MODELGATE_DASHBOARD_ENABLED: {
    type: 'boolean',
    default: true,
    description: 'Serves the web dashboard at /dashboard and its sign-in at /dashboard/session (docs/dashboard.md). Off: those paths answer 404 and no session can be opened.',
  },
  MODELGATE_DASHBOARD_SESSION_TTL: {
    type: 'integer',
    default: 28_800,
    minimum: 300,
    maximum: 2_592_000,
    description: "Seconds a dashboard sign-in lasts (8 hours by default; 5 minutes to 30 days). A session ends sooner when its key is revoked, expires or is regenerated, or at sign-out.",
  },
});

export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};

/** Every dashboard answer, refusals included, carries the security headers. */
function secured(route: Route): Route {
  return {
    ...route,
    handle(ctx) {
      Object.assign(ctx.responseHeaders, SECURITY_HEADERS);
      return route.handle(ctx);
    },
  };
}

function sendFile(ctx: RequestContext, file: StaticFile): void {
  const headers = {
    ...baseHeaders(ctx),
    'content-type': file.type,
    'cache-control': file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    etag: file.etag,
    vary: 'accept-encoding',
  };
  if (ctx.headers['if-none-match'] === file.etag) {
    ctx.status = 304;
    ctx.res.writeHead(304, headers);
    ctx.res.end();
    return;
  }
  const { body, encoding } = encodingFor(file, ctx.headers['accept-encoding'] as string | undefined);
  ctx.status = 200;
  ctx.res.writeHead(200, { ...headers, ...(encoding ? { 'content-encoding': encoding } : {}), 'content-length': body.length });
  ctx.res.end(body);
}

export const dashboard: PluginModule<typeof settings> = {
  name: 'dashboard',
  settings,
  create(values, deps) {
    const s = values as SettingsOf<typeof settings>;
    if (!s.MODELGATE_DASHBOARD_ENABLED) return { name: 'dashboard' };
    const dir = dashboardDir(dirname(fileURLToPath(import.meta.url)));
    const files = dir ? loadDashboard(dir) : new Map<string, StaticFile>();
    if (!dir) deps.logger.warn('dashboard: no built dashboard found (run `npm run build`): /dashboard answers 503');
    const page = (ctx: RequestContext) => {
      const index = files.get('index.html');
      if (!index) throw new GatewayError('provider_unavailable', { code: 'dashboard_not_built', message: 'The dashboard is not built: run `npm run build`' });
      sendFile(ctx, index);
    };
    const routes: Route[] = [
      { method: 'GET', path: '/dashboard', public: true, handle: async (ctx) => page(ctx) },
      { method: 'GET', path: '/dashboard/', public: true, handle: async (ctx) => page(ctx) },
      {
        method: 'GET',
        path: '/dashboard/assets/{file}',
        public: true,
        async handle(ctx) {
          const file = files.get(`assets/${ctx.params.file}`);
          if (!file) throw new GatewayError('route_not_found', { message: 'No such dashboard file' });
          sendFile(ctx, file);
        },
      },
    ];
    const sessions = deps.sessions.source;
    if (sessions) {
      routes.push(
        ...sessionRoutes({
          sessions,
          ttlMs: s.MODELGATE_DASHBOARD_SESSION_TTL * 1000,
          bodyIdleMs: values.MODELGATE_BODY_IDLE_TIMEOUT as number,
          baseUrl: values.MODELGATE_BASE_URL as string | undefined,
        }),
      );
    }
    return { name: 'dashboard', routes: routes.map(secured) };
  },
};
