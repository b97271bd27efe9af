// The routes that need no key: health (load balancers), this document, and the Prometheus metrics
// outside /v1. None of them calls a provider.
import { headers } from '../headers.js';
import { refusal } from '../responses.js';
import type { PathItem } from '../types.js';

const health = {
  'application/json': { schema: { oneOf: [{ $ref: '#/components/schemas/HealthStatus' }, { $ref: '#/components/schemas/HealthDetails' }] } },
};

export const gatewayPaths: Record<string, PathItem> = {
  '/v1/health': {
    get: {
      operationId: 'getHealth',
      tags: ['Gateway'],
      summary: 'Health',
      description:
        'For load balancers: needs no key, never refuses, is not IP-filtered and never calls a provider; the status code says whether the gateway serves. Without a valid key (or from an address the IP filter refuses) only `status`; with one also the version, uptime and configured providers.',
      security: [{}, { bearerAuth: [] }],
      parameters: [{ $ref: '#/components/parameters/RequestId' }],
      responses: {
        '200': { description: 'Serving.', headers: headers('cache-control'), content: health },
        '503': { description: 'Shutting down: in-flight requests finish, new ones should go elsewhere.', headers: headers('cache-control'), content: health },
      },
    },
  },
  '/v1/openapi.json': {
    get: {
      operationId: 'getOpenApiDocument',
      tags: ['Gateway'],
      summary: 'This document',
      description: 'The OpenAPI 3.1 description of this gateway\'s routes. Needs no key; IP-filtered like every route but health.',
      security: [],
      parameters: [{ $ref: '#/components/parameters/RequestId' }],
      responses: {
        '200': { description: 'The document.', headers: headers(), content: { 'application/json': { schema: { type: 'object' } } } },
        '403': { $ref: '#/components/responses/IpForbidden' },
      },
    },
  },
  '/metrics': {
    get: {
      operationId: 'getMetrics',
      tags: ['Gateway'],
      summary: 'Prometheus metrics',
      description:
        'Prometheus text format, outside /v1. Needs no gateway key; when MODELGATE_METRICS_TOKEN is set, that token as a bearer token. IP-filtered. Absent (404) with MODELGATE_METRICS_ENABLED=false.',
      security: [{}, { metricsToken: [] }],
      parameters: [{ $ref: '#/components/parameters/RequestId' }],
      responses: {
        '200': { description: 'The metrics.', headers: headers(), content: { 'text/plain': { schema: { type: 'string' } } } },
        '401': refusal('MODELGATE_METRICS_TOKEN is set and the request does not carry it (`Invalid API key`, code invalid_api_key).', 'www-authenticate'),
        '403': { $ref: '#/components/responses/IpForbidden' },
      },
    },
  },
};
