// The OpenAPI 3.1 description of the client-facing HTTP API, assembled from its parts, and the
// document a gateway serves: only the routes it registered (a gateway without metrics does not
// describe /metrics), under the address its clients use.
import type { OverrideSpec } from '../overrides.js';
import type { Route } from '../pipeline.js';
import { HEADERS } from './headers.js';
import { RESPONSES } from './responses.js';
import { chatSchemas } from './schemas/chat.js';
import { gatewaySchemas } from './schemas/gateway.js';
import { usageSchemas } from './schemas/usage.js';
import { analyticsSchemas } from './schemas/analytics.js';
import { keySchemas } from './schemas/keys.js';
import { webhookSchemas } from './schemas/webhooks.js';
import { alertSchemas } from './schemas/alerts.js';
import { experimentSchemas } from './schemas/experiments.js';
import { responsesSchemas } from './schemas/responses.js';
import { embeddingsSchemas } from './schemas/embeddings.js';
import { chatPaths } from './paths/chat.js';
import { responsesPaths } from './paths/responses.js';
import { embeddingsPaths } from './paths/embeddings.js';
import { modelPaths } from './paths/models.js';
import { providerPaths } from './paths/providers.js';
import { usagePaths } from './paths/usage.js';
import { analyticsPaths } from './paths/analytics.js';
import { gatewayPaths } from './paths/gateway.js';
import { keyPaths } from './paths/keys.js';
import { webhookPaths } from './paths/webhooks.js';
import { alertPaths } from './paths/alerts.js';
import { experimentPaths } from './paths/experiments.js';
import { recordPaths } from './paths/records.js';
import { recordSchemas } from './schemas/records.js';
import { dashboardPaths } from './paths/dashboard.js';
import { dashboardSchemas } from './schemas/dashboard.js';
import type { Method, OpenApiDocument, PathItem } from './types.js';

/**
 * The version of the API described (the `/v1` contract), not of the gateway: the document needs no
 * key, and which release runs here is shown only with one (GET /v1/health).
 */
export const API_VERSION = '1';

export interface DescriptionOptions {
  version: string;
  /** The per-request override objects the pipeline accepts (body `modelgate.<name>` and headers). */
  overrides: readonly OverrideSpec[];
  /** Provider names, as used in paths. */
  providers: readonly string[];
  /** Where clients reach the gateway (MODELGATE_BASE_URL), if the operator said. */
  baseUrl?: string;
}

const DESCRIPTION = `An OpenAI-compatible AI gateway: an unchanged OpenAI SDK with its base URL set to the gateway's /v1 and a gateway key works, streaming included.

Every route under /v1 needs a gateway key (\`Authorization: Bearer uc_…\`, or the dashboard's session cookie, with x-csrf-token on changes) except GET /v1/health and GET /v1/openapi.json (this document). Every response carries x-request-id. Errors have OpenAI's body, \`{"error":{"message","type","param","code"}}\`; besides those described per operation, an unknown path answers 404 (code unknown_url), a method a path does not serve 405 with an Allow header, and a fault of the gateway itself 500 (code internal_error). Any path may also answer, before a request is read: 400 (code invalid_request) for a malformed HTTP request, 408 (code request_timeout) when its headers or body do not arrive within MODELGATE_HEADERS_TIMEOUT / MODELGATE_REQUEST_TIMEOUT / MODELGATE_BODY_IDLE_TIMEOUT, 431 (code headers_too_large) for headers over 16 KB, 417 (code expectation_failed) for an Expect other than 100-continue, and 503 (code too_many_connections, Retry-After: 1) past MODELGATE_MAX_CONNECTIONS open connections; each of these closes the connection.`;

/** A route's path as OpenAPI writes it: `/v1/models/{model+}` (rest of the path) is `/v1/models/{model}`. */
export function openApiPath(routePath: string): string {
  return routePath.replace(/\{(\w+)\+\}/g, '{$1}');
}

/** The description of every route the gateway can register. */
export function describeApi(options: DescriptionOptions): OpenApiDocument {
  // MODELGATE_BASE_URL ends in /v1 and the paths start with it (and /metrics lives beside it); without
  // one, `/` is the origin this document was fetched from.
  const server = options.baseUrl?.replace(/\/+$/, '').replace(/\/v1$/, '');
  return {
    openapi: '3.1.0',
    info: { title: 'modelgate', version: options.version, description: DESCRIPTION, license: { name: 'MIT', identifier: 'MIT' } },
    servers: [server ? { url: server, description: 'MODELGATE_BASE_URL without its /v1.' } : { url: '/', description: 'The gateway this document was fetched from.' }],
    security: [{ bearerAuth: [] }, { sessionCookie: [] }],
    tags: [
      { name: 'Chat', description: 'OpenAI chat completions, routed.' },
      { name: 'Responses', description: "OpenAI's Responses API on any provider, with stored responses." },
      { name: 'Embeddings', description: 'OpenAI embeddings, routed among embedding models.' },
      { name: 'Models', description: 'The model catalog.' },
      { name: 'Providers', description: 'The providers behind the gateway.' },
      { name: 'Usage', description: 'Spend and budgets.' },
      { name: 'Analytics', description: 'Usage, cost, error and performance reports from the rollups.' },
      { name: 'Feedback', description: 'Ratings of answers, for the A/B experiments they entered.' },
      { name: 'Keys', description: 'API keys: the admin API (admin keys only).' },
      { name: 'Webhooks', description: 'Outbound webhook endpoints and their deliveries: the admin API (admin keys only).' },
      { name: 'Alerts', description: 'The alert rules and channels, and the latest alerts: the admin API (admin keys only).' },
      { name: 'Experiments', description: 'A/B experiments between models or routing strategies, their results and decision: the admin API (admin keys only).' },
      { name: 'Request records', description: 'Stored request records (MODELGATE_REQUEST_RECORDS): the admin API (admin keys only).' },
      { name: 'Gateway', description: 'Health, metrics and this document.' },
      { name: 'Dashboard', description: 'The web dashboard at /dashboard and its sign-in: a key exchanged for a session cookie.' },
    ],
    paths: {
      ...chatPaths(options.overrides),
      ...responsesPaths(options.overrides),
      ...embeddingsPaths(options.overrides),
      ...modelPaths, ...providerPaths(options.providers), ...usagePaths, ...analyticsPaths, ...keyPaths, ...webhookPaths, ...alertPaths, ...experimentPaths, ...recordPaths, ...gatewayPaths, ...dashboardPaths },
    components: {
      schemas: {
        ...chatSchemas(options.overrides),
        ...responsesSchemas(options.overrides),
        ...embeddingsSchemas(options.overrides),
        ...gatewaySchemas, ...usageSchemas, ...analyticsSchemas, ...keySchemas, ...webhookSchemas, ...alertSchemas, ...experimentSchemas, ...recordSchemas, ...dashboardSchemas },
      headers: HEADERS,
      parameters: {
        RequestId: {
          name: 'x-request-id',
          in: 'header',
          description: 'An id to trace the request by (1 to 128 of A-Z a-z 0-9 _ . : -): echoed in the response and logged. Anything else is replaced by a new UUID.',
          schema: { type: 'string' },
        },
      },
      responses: RESPONSES,
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'A gateway API key: MODELGATE_API_KEY (an admin key) or another key of the gateway. Begins with uc_.' },
        metricsToken: { type: 'http', scheme: 'bearer', description: 'MODELGATE_METRICS_TOKEN, when set: then GET /metrics needs it.' },
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: 'modelgate_session',
          description: "The dashboard's session (POST /dashboard/session), accepted by every keyed route in place of a bearer key when no Authorization header is sent; changes (POST, PATCH, PUT, DELETE) then need the session's CSRF token in x-csrf-token, else 403 csrf_failed.",
        },
      },
    },
  };
}

/** The description narrowed to the routes this gateway registered. */
export function servedDescription(description: OpenApiDocument, routes: readonly Route[]): OpenApiDocument {
  const paths: Record<string, PathItem> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    const method = route.method.toLowerCase() as Method;
    const operation = description.paths[path]?.[method];
    if (operation) (paths[path] ??= {})[method] = operation;
  }
  return { ...description, paths };
}
