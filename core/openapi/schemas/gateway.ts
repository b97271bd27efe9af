// Schemas of the gateway's own answers, field for field as their routes write them: the error body
// (core/errors.ts), models (core/model-list.ts), health (core/routes.ts), providers
// (core/provider-routes.ts) and the budget resume (plugins/cost/usage-route.ts).
import type { Schema } from '../types.js';

const nullable = (type: string) => ({ type: [type, 'null'] });
const string = { type: 'string' };
const dateTime = { type: 'string', format: 'date-time' };
const circuit = { type: 'string', enum: ['closed', 'open', 'half_open', 'disabled'], description: '`disabled` when the circuit breaker is off.' };
// core/upstream-error.ts FailureReason.
const failureReason = { type: 'string', enum: ['http_status', 'bad_response', 'connection', 'timeout', 'stream_error', 'stream_truncated'] };

export const gatewaySchemas = {
  ErrorBody: {
    type: 'object',
    description: "OpenAI's error body. `message` is the specification's text where it gives one (`Invalid API key`, `Model not found`, `Rate limit exceeded`, …).",
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['message', 'type', 'param', 'code'],
        properties: {
          message: string,
          type: { type: 'string', description: 'e.g. invalid_request_error, permission_error, requests, tokens, insufficient_quota, server_error, service_unavailable_error.' },
          param: { ...nullable('string'), description: 'The field or header at fault, when there is one.' },
          code: { ...nullable('string'), description: 'A stable code to act on, e.g. invalid_api_key, model_not_found, rate_limit_exceeded.' },
        },
      },
    },
  },
  AutoModel: {
    type: 'object',
    description: '`auto`: the gateway chooses the model by its routing strategy.',
    required: ['id', 'object', 'created', 'owned_by', 'available', 'description'],
    properties: {
      id: { const: 'auto' },
      object: { const: 'model' },
      created: { type: 'integer', description: 'Unix seconds: when this gateway started.' },
      owned_by: { const: 'modelgate' },
      available: { type: 'boolean', description: 'Some configured provider serves a catalog model.' },
      description: string,
    },
  },
  CatalogModel: {
    type: 'object',
    description: "A catalog model in OpenAI's model-object shape, with the gateway's own fields.",
    required: ['id', 'object', 'created', 'owned_by', 'provider', 'available', 'kind', 'aliases', 'pricing', 'context_window', 'max_output_tokens', 'capabilities', 'quality'],
    properties: {
      id: { type: 'string', description: 'The catalog id, or `provider/id` when several providers serve that id.' },
      object: { const: 'model' },
      created: { type: 'integer', description: 'Unix seconds: when this gateway started (the catalog has no dates).' },
      owned_by: { type: 'string', description: 'The provider.' },
      provider: string,
      available: { type: 'boolean', description: 'Its provider is configured.' },
      kind: { type: 'string', enum: ['chat', 'embedding'], description: 'What it serves: chat completions or embeddings.' },
      dimensions: { type: 'integer', minimum: 1, description: 'Embedding models: the length of the vectors returned by default, when the catalog knows it.' },
      aliases: { type: 'array', items: string, description: 'Other names a request may use for it.' },
      pricing: {
        type: 'object',
        required: ['unit', 'input', 'output', 'cached_input', 'cache_write'],
        properties: {
          unit: { const: 'USD per 1M tokens' },
          input: { ...nullable('number'), description: 'null: no known price.' },
          output: nullable('number'),
          cached_input: nullable('number'),
          cache_write: nullable('number'),
        },
      },
      context_window: { ...nullable('integer'), description: 'Tokens (for an embedding model, per input); null when unknown.' },
      max_output_tokens: nullable('integer'),
      capabilities: {
        type: 'object',
        description: 'What the model can do; an operator catalog may add capabilities of its own.',
        properties: Object.fromEntries(['tools', 'vision', 'json', 'json_schema', 'reasoning', 'prompt_caching'].map((name) => [name, { type: 'boolean' }])),
        additionalProperties: { type: 'boolean' },
      },
      quality: {
        type: 'object',
        required: ['score', 'estimated', 'source'],
        properties: {
          score: { type: 'number', minimum: 0, maximum: 1 },
          estimated: { type: 'boolean', description: 'No public score: an estimate, by the rule in `source`.' },
          source: string,
        },
      },
    },
  },
  Model: { oneOf: [{ $ref: '#/components/schemas/AutoModel' }, { $ref: '#/components/schemas/CatalogModel' }] },
  ModelList: {
    type: 'object',
    required: ['object', 'data'],
    properties: { object: { const: 'list' }, data: { type: 'array', items: { $ref: '#/components/schemas/Model' }, description: '`auto` first, then the catalog.' } },
  },
  HealthStatus: {
    type: 'object',
    description: 'What everyone sees: whether the gateway serves.',
    required: ['status'],
    properties: { status: { type: 'string', enum: ['ok', 'shutting_down'] } },
  },
  HealthDetails: {
    type: 'object',
    description: 'What a client with a valid key (from an address the IP filter admits) sees.',
    required: ['status', 'version', 'uptime_seconds', 'providers'],
    properties: {
      status: { type: 'string', enum: ['ok', 'shutting_down'] },
      version: { type: 'string', description: "The gateway's version." },
      uptime_seconds: { type: 'integer', minimum: 0 },
      providers: { type: 'object', required: ['configured'], properties: { configured: { type: 'array', items: string, description: 'Providers with credentials.' } } },
    },
  },
  ProviderList: {
    type: 'object',
    required: ['object', 'data'],
    properties: {
      object: { const: 'list' },
      data: {
        type: 'array',
        items: {
          type: 'object',
          required: ['name', 'configured', 'base_url', 'circuit', 'models'],
          properties: {
            name: string,
            configured: { type: 'boolean', description: 'It has credentials.' },
            base_url: { type: 'string', description: 'Where it is called, without credentials or query.' },
            circuit,
            models: { type: 'array', items: string, description: 'Its catalog model ids.' },
          },
        },
      },
    },
  },
  ProviderStatusList: {
    type: 'object',
    required: ['object', 'window', 'data'],
    properties: {
      object: { const: 'list' },
      window: { type: 'string', description: 'What the figures cover.' },
      data: {
        type: 'array',
        items: {
          type: 'object',
          required: ['provider', 'state', 'circuit', 'success_rate', 'requests', 'latency_ms', 'last_error', 'cooldown_until', 'cooldowns'],
          properties: {
            provider: string,
            state: { type: 'string', enum: ['not_configured', 'down', 'unknown', 'degraded', 'healthy'], description: '`unknown` before any traffic; `down` while its circuit is open.' },
            circuit,
            success_rate: { ...nullable('number'), minimum: 0, maximum: 1, description: 'null before any traffic.' },
            requests: { type: 'integer', minimum: 0, description: 'Attempts in the window.' },
            latency_ms: {
              description: 'Of successful attempts; null before one.',
              anyOf: [{ type: 'object', required: ['p50', 'p95'], properties: { p50: { type: 'number' }, p95: { type: 'number' } } }, { type: 'null' }],
            },
            last_error: {
              anyOf: [
                { type: 'object', required: ['message', 'status', 'reason', 'at'], properties: { message: string, status: { type: 'integer' }, reason: failureReason, at: dateTime } },
                { type: 'null' },
              ],
            },
            cooldown_until: { description: "The latest Retry-After cooldown still ahead among its models.", anyOf: [dateTime, { type: 'null' }] },
            cooldowns: { type: 'array', items: { type: 'object', required: ['model', 'until'], properties: { model: string, until: dateTime } } },
          },
        },
      },
    },
  },
  ProviderTest: {
    description: "The result of the provider's model-list call: `configured: false` (no call made) or what the call answered.",
    oneOf: [
      {
        type: 'object',
        required: ['provider', 'configured', 'ok', 'message'],
        properties: { provider: string, configured: { const: false }, ok: { const: false }, message: string },
      },
      {
        type: 'object',
        required: ['provider', 'configured', 'ok', 'status', 'latency_ms'],
        properties: {
          provider: string,
          configured: { const: true },
          ok: { type: 'boolean', description: 'The provider answered 2xx.' },
          status: { type: 'integer', description: "The provider's HTTP status; 0 when it did not answer." },
          latency_ms: { type: 'integer', minimum: 0 },
          error: { type: 'string', description: 'Why it failed; absent when ok.' },
        },
      },
    ],
  },
  BudgetResume: {
    type: 'object',
    required: ['resumed', 'paused'],
    properties: { resumed: { type: 'boolean', description: 'A pause was in force and is ended; false when there was none.' }, paused: { type: 'null' } },
  },
} as const satisfies Record<string, Schema>;
