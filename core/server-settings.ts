// Settings of the core itself: identity, where it listens, where it keeps state, and the bounds on
// connections that keep slow or refused clients from holding them (docs/security.md, "Limits under attack").
import { defineSettings } from './settings.js';

export const serverSettings = defineSettings({
  MODELGATE_BASE_URL: {
    type: 'string',
    pattern: '^https?://',
    hint: 'be an http(s) URL',
    variants: ['dev', 'staging', 'prod'],
    example: 'http://localhost:3000/v1',
    description: 'The base address clients use to reach this gateway, ending in /v1 (behind a load balancer or TLS terminator). Logged at boot and printed in the demo\'s examples; defaults to http://<host>:<port>/v1.',
  },
  MODELGATE_HOST: { type: 'string', default: '0.0.0.0', description: 'Interface the HTTP server binds to.' },
  MODELGATE_PORT: { type: 'integer', default: 3000, minimum: 0, maximum: 65535, description: 'TCP port the HTTP server listens on (0 picks a free port).' },
  MODELGATE_DATA_DIR: { type: 'string', default: './data', description: 'Directory where the embedded store keeps its files (the SQLite database, modelgate.db, unless MODELGATE_DATABASE_URL is set).' },
  MODELGATE_STORE: {
    type: 'string',
    enum: ['embedded', 'redis'],
    default: 'embedded',
    description:
      'Where what must be shared at memory speed lives — rate counters, budget reservations and spend counters: `embedded` (this process) or `redis` (shared by replicas). What must survive lives in the database (MODELGATE_DATABASE_URL).',
  },
  MODELGATE_WORKERS: {
    type: 'string',
    default: '1',
    pattern: '^(auto|[1-9][0-9]{0,2})$',
    hint: 'be a whole number from 1 to 999, or auto',
    description:
      'Worker processes serving the one port (node:cluster), each a whole gateway. `auto`: one per core (capped by a container CPU quota) when the shared state is in Redis (MODELGATE_STORE=redis, and MODELGATE_CACHE_TYPE=redis unless the cache is off), else one. A number above 1 without that stops the start: N workers would each enforce limits, budgets and key revocations on their own. The Docker image sets `auto`. Connection bounds (MODELGATE_MAX_CONNECTIONS, _PER_IP) apply per worker.',
  },
  MODELGATE_SHUTDOWN_TIMEOUT: {
    type: 'integer',
    default: 25000,
    minimum: 0,
    description: 'On SIGTERM/SIGINT, how long (ms) in-flight requests and streams may take to finish before the process exits anyway.',
  },
  MODELGATE_HEADERS_TIMEOUT: {
    type: 'integer',
    default: 10000,
    minimum: 1000,
    description: 'ms a client has to send a request\'s headers, from its first byte; then 408 and the connection closes. Slow-header attacks (slowloris) hold a connection this long at most. Checked once a second.',
  },
  MODELGATE_REQUEST_TIMEOUT: {
    type: 'integer',
    default: 60000,
    minimum: 1000,
    description:
      'ms a client has to send a whole request, headers and body; then 408 and the connection closes. Only the request\'s reception counts: a long streamed answer is not cut. At least MODELGATE_HEADERS_TIMEOUT. Checked once a second.',
  },
  MODELGATE_KEEP_ALIVE_TIMEOUT: {
    type: 'integer',
    default: 65000,
    minimum: 0,
    description: 'ms an idle keep-alive connection stays open between requests. Keep it above the idle timeout of a load balancer in front (60 s on AWS ALB), or it may send a request on a connection the gateway is closing.',
  },
  MODELGATE_MAX_CONNECTIONS: {
    type: 'integer',
    default: 448,
    minimum: 1,
    description:
      'Client connections served at once. The next 64 are answered 503 (code too_many_connections, Retry-After: 1, health checks still answered) and closed; past those, new connections are closed at accept. Each request may also hold a connection to a provider: keep this plus 64 at most half the open-files limit (ulimit -n; the default fits 1,024), or the boot warns.',
  },
  MODELGATE_MAX_CONNECTIONS_PER_IP: {
    type: 'integer',
    default: 0,
    minimum: 0,
    description:
      'Client connections one address (an IPv6 /64) may hold open at once; past it, its new connections are closed at accept, so one client holding idle or slow connections cannot take every place of MODELGATE_MAX_CONNECTIONS. 0: no cap per address (the default: behind a load balancer or proxy every connection comes from its few addresses; set it when clients connect directly).',
  },
});
