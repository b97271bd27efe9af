// The web dashboard outside /v1 (plugins/dashboard.ts): its pages and their files, and its sign-in,
// which exchanges a key for the session cookie the /v1 routes also accept.
import { headers } from '../headers.js';
import { refusal } from '../responses.js';
import type { PathItem } from '../types.js';

const SECURITY = ['content-security-policy'] as const;
const notBuilt = refusal('The dashboard was not built (code dashboard_not_built): run `npm run build`.', ...SECURITY);
const page = (operationId: string) => ({
  get: {
    operationId,
    tags: ['Dashboard'],
    summary: 'The dashboard page',
    description: 'The single page of the dashboard (its views are chosen by the URL fragment: `#/usage`, `#/settings/keys`, …). Needs no key: the page signs in itself. IP-filtered. Absent (404) with MODELGATE_DASHBOARD_ENABLED=false.',
    security: [],
    parameters: [{ $ref: '#/components/parameters/RequestId' }],
    responses: {
      '200': { description: 'index.html, gzip- or brotli-encoded when accepted.', headers: headers(...SECURITY, 'etag'), content: { 'text/html': { schema: { type: 'string' } } } },
      '304': { description: 'Unchanged since the ETag sent in If-None-Match.', headers: headers(...SECURITY, 'etag') },
      '403': { $ref: '#/components/responses/IpForbidden' },
      '503': notBuilt,
    },
  },
});
const session = (description: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${description}` } } });

export const dashboardPaths: Record<string, PathItem> = {
  '/dashboard': page('getDashboard'),
  '/dashboard/': page('getDashboardSlash'),
  '/dashboard/assets/{file}': {
    get: {
      operationId: 'getDashboardAsset',
      tags: ['Dashboard'],
      summary: 'A file of the dashboard',
      description: 'A script or stylesheet of the page, named by its content hash: cached for a year (immutable).',
      security: [],
      parameters: [{ name: 'file', in: 'path', required: true, description: 'The file name, as index.html names it.', schema: { type: 'string' } }, { $ref: '#/components/parameters/RequestId' }],
      responses: {
        '200': {
          description: 'The file.',
          headers: headers(...SECURITY, 'etag'),
          content: { 'text/javascript': { schema: { type: 'string' } }, 'text/css': { schema: { type: 'string' } } },
        },
        '304': { description: 'Unchanged since the ETag sent in If-None-Match.', headers: headers(...SECURITY, 'etag') },
        '403': { $ref: '#/components/responses/IpForbidden' },
        '404': refusal('No such file (code unknown_url).', ...SECURITY),
      },
    },
  },
  '/dashboard/session': {
    post: {
      operationId: 'signIn',
      tags: ['Dashboard'],
      summary: 'Sign in',
      description:
        "Exchanges an API key for a session: its token travels in an HttpOnly, SameSite=Strict cookie (Secure over TLS) that every /v1 route accepts in place of the Authorization header; a change made with it needs the session's `csrf_token` in x-csrf-token (else 403 csrf_failed). A session ends at `expires_at`, at sign-out, or as soon as the secret it signed in with stops working (revoked, expired, regenerated past its grace — a replaced admin secret's session loses admin rights at once — or a new MODELGATE_API_KEY). JSON only, and never from another site (Sec-Fetch-Site or Origin).",
      security: [],
      parameters: [{ $ref: '#/components/parameters/RequestId' }],
      requestBody: { required: true, description: 'The key to sign in with.', content: { 'application/json': { schema: { $ref: '#/components/schemas/SignIn' } } } },
      responses: {
        '200': { description: 'Signed in.', headers: headers(...SECURITY, 'cache-control', 'set-cookie'), content: session('DashboardSession') },
        '400': refusal('The body is not JSON (invalid_json) or has no `key` (param key).', ...SECURITY),
        '401': refusal('`Invalid API key` (code invalid_api_key) or `API key expired` (code api_key_expired).', ...SECURITY, 'www-authenticate'),
        '403': refusal('Sent from another site (code csrf_failed), or the IP filter refuses the client (code ip_not_allowed).'),
        '415': refusal('The body is not declared as application/json (code unsupported_media_type).', ...SECURITY),
        '503': refusal('The database did not answer (code store_unavailable).', ...SECURITY, 'retry-after'),
      },
    },
    get: {
      operationId: 'getSession',
      tags: ['Dashboard'],
      summary: 'The current session',
      description: 'The session the cookie stands for, its CSRF token included (for a page that was reloaded).',
      security: [{ sessionCookie: [] }],
      parameters: [{ $ref: '#/components/parameters/RequestId' }],
      responses: {
        '200': { description: 'Signed in.', headers: headers(...SECURITY, 'cache-control'), content: session('DashboardSession') },
        '401': refusal('No live session (code session_required).', ...SECURITY),
        '403': { $ref: '#/components/responses/IpForbidden' },
      },
    },
    delete: {
      operationId: 'signOut',
      tags: ['Dashboard'],
      summary: 'Sign out',
      description: 'Ends the session and empties the cookie. With a live session, needs its x-csrf-token (else 403 csrf_failed).',
      security: [{ sessionCookie: [] }],
      parameters: [{ $ref: '#/components/parameters/RequestId' }],
      responses: {
        '200': { description: 'Signed out.', headers: headers(...SECURITY, 'cache-control', 'set-cookie'), content: session('SessionEnded') },
        '403': refusal('The CSRF token is missing or wrong (code csrf_failed), or the IP filter refuses the client (code ip_not_allowed).'),
      },
    },
  },
};
