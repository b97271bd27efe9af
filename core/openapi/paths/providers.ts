// The provider endpoints of core/provider-routes.ts: the list, the status from live traffic, and a
// connection test (the only one that calls a provider).
import { headers, RATE_LIMIT_HEADERS } from '../headers.js';
import { keyedErrors, keyedRefusal, refusal } from '../responses.js';
import type { PathItem } from '../types.js';

const json = (name: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } });
const ok = (description: string, schema: string) => ({ '200': { description, headers: headers(...RATE_LIMIT_HEADERS), content: json(schema) } });

export function providerPaths(providers: readonly string[]): Record<string, PathItem> {
  return {
    '/v1/providers': {
      get: {
        operationId: 'listProviders',
        tags: ['Providers'],
        summary: 'List providers',
        description: 'Every provider, configured or not, with its base URL (never a credential), its catalog models and its circuit.',
        parameters: [{ $ref: '#/components/parameters/RequestId' }],
        responses: { ...ok('The providers.', 'ProviderList'), ...keyedErrors() },
      },
    },
    '/v1/providers/status': {
      get: {
        operationId: 'getProvidersStatus',
        tags: ['Providers'],
        summary: 'Provider health from live traffic',
        description: 'Per provider, over its last 200 attempts: state, circuit, success rate, p50/p95 latency, last error, Retry-After cooldowns. No provider is called.',
        parameters: [{ $ref: '#/components/parameters/RequestId' }],
        responses: { ...ok('The status of each provider.', 'ProviderStatusList'), ...keyedErrors() },
      },
    },
    '/v1/providers/{provider}/test': {
      get: {
        operationId: 'testProvider',
        tags: ['Providers'],
        summary: 'Test a provider connection',
        description:
          "Makes the provider's model-list call with the gateway's credentials (the cheapest real proof they work; no model is run), at most 10 s. A failed call is still a 200 that says why.",
        parameters: [
          { name: 'provider', in: 'path', required: true, description: 'A provider name.', schema: { type: 'string', enum: [...providers] } },
          { $ref: '#/components/parameters/RequestId' },
        ],
        responses: {
          ...ok('What the call answered, or that the provider has no credentials.', 'ProviderTest'),
          '400': refusal('The path is not valid percent-encoding (code invalid_request, param provider).'),
          '404': keyedRefusal('No provider of that name (code provider_not_found, param provider).'),
          ...keyedErrors(),
        },
      },
    },
  };
}
