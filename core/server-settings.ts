// Settings of the core itself: identity, where it listens, where it keeps state, request bounds.
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
  MODELGATE_SHUTDOWN_TIMEOUT: {
    type: 'integer',
    default: 25000,
    minimum: 0,
    description: 'On SIGTERM/SIGINT, how long (ms) in-flight requests and streams may take to finish before the process exits anyway.',
  },
});
