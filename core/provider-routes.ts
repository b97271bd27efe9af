// Provider endpoints: GET /v1/providers (configured providers and their models, never a secret),
// GET /v1/providers/status (health from live traffic: circuit, success rate, latency, last error)
// and GET /v1/providers/{provider}/test (the provider's model-list call, the cheapest real proof
// that the credentials and endpoint work; 404 for an unknown provider).
import type { Catalog } from './catalog.js';
import type { HealthRegistry } from './health.js';
import { GatewayError } from './errors.js';
import { redactText } from './redact.js';
import type { Route } from './pipeline.js';
import { readBody, type Forwarder } from './proxy.js';
import { sendJson } from './respond.js';
import type { Provider } from './provider.js';

export interface ProviderRouteDeps {
  catalog: Catalog;
  providers: ReadonlyMap<string, Provider>;
  health: HealthRegistry;
  forwarder: Forwarder;
}

const TEST_TIMEOUT_MS = 10_000;

/** The base URL without credentials or query: safe to show. */
function publicUrl(href: string): string {
  const url = new URL(href);
  url.username = '';
  url.password = '';
  url.search = '';
  return url.toString().replace(/\/$/, '');
}

export function providerRoutes({ catalog, providers, health, forwarder }: ProviderRouteDeps): Route[] {
  const lookup = (name: string) => {
    const provider = providers.get(name);
    if (!provider) throw new GatewayError('provider_not_found', { param: 'provider', message: `Provider not found: '${name}' (known: ${[...providers.keys()].join(', ')})` });
    return provider;
  };

  return [
    {
      method: 'GET',
      path: '/v1/providers',
      async handle(ctx) {
        const data = [...providers.values()].map((provider) => ({
          name: provider.name,
          configured: provider.configured,
          base_url: publicUrl(provider.baseUrl),
          circuit: health.circuit(provider.name),
          models: catalog.models.filter((model) => model.provider === provider.name).map((model) => model.id),
        }));
        sendJson(ctx, 200, { object: 'list', data });
      },
    },
    {
      method: 'GET',
      path: '/v1/providers/status',
      async handle(ctx) {
        const data = [...providers.values()].map((provider) => {
          const status = health.status(provider.name);
          let state: string;
          if (!provider.configured) state = 'not_configured';
          else if (health.circuitOpen(provider.name)) state = 'down';
          else if (status.requests === 0) state = 'unknown';
          else if ((status.successRate ?? 1) < 0.9 || status.circuit === 'half_open' || status.cooldownUntil) state = 'degraded';
          else state = 'healthy';
          return {
            provider: provider.name,
            state,
            circuit: status.circuit,
            success_rate: status.successRate,
            requests: status.requests,
            latency_ms: status.latencyMs,
            last_error: status.lastError,
            cooldown_until: status.cooldownUntil,
            cooldowns: status.cooldowns,
          };
        });
        sendJson(ctx, 200, { object: 'list', window: 'last 200 attempts per provider', data });
      },
    },
    {
      method: 'GET',
      path: '/v1/providers/{provider}/test',
      async handle(ctx) {
        const provider = lookup(ctx.params.provider!);
        if (!provider.configured) {
          return sendJson(ctx, 200, { provider: provider.name, configured: false, ok: false, message: 'not configured: the provider has no credentials' });
        }
        const abort = new AbortController();
        const timer = setTimeout(() => abort.abort(), TEST_TIMEOUT_MS);
        const onClientGone = () => abort.abort();
        ctx.signal.addEventListener('abort', onClientGone, { once: true });
        const started = performance.now();
        try {
          const response = await forwarder.send(ctx.req, ctx.res, provider.testRequest(), abort.signal);
          const body = await readBody(response, 1024 * 1024, abort.signal);
          const status = response.statusCode ?? 0;
          const latency = Math.round(performance.now() - started);
          const ok = status >= 200 && status < 300;
          const error = ok ? undefined : provider.error(status, response.headers, body.toString('utf8')).message;
          sendJson(ctx, 200, { provider: provider.name, configured: true, ok, status, latency_ms: latency, ...(error ? { error } : {}) });
        } catch (error) {
          const latency = Math.round(performance.now() - started);
          const message = abort.signal.aborted ? `no answer within ${TEST_TIMEOUT_MS} ms` : `could not connect: ${(error as NodeJS.ErrnoException).code ?? redactText((error as Error).message)}`;
          sendJson(ctx, 200, { provider: provider.name, configured: true, ok: false, status: 0, latency_ms: latency, error: message });
        } finally {
          clearTimeout(timer);
          ctx.signal.removeEventListener('abort', onClientGone);
        }
      },
    },
  ];
}
