// The router on a fixed catalog: each strategy's ranking, the constraints, the chain extensions,
// and the answer when nothing fits.
import t from 'tap';
import { router } from '../../plugins/router.js';
import { failover } from '../../plugins/failover.js';
import { failoverChain } from '../../plugins/router/chain.js';
import { Catalog, bareModel, type CatalogModel } from '../../core/catalog.js';
import { HealthRegistry } from '../../core/health.js';
import { compileOverrides, type Overrides } from '../../core/overrides.js';
import { estimatePromptTokens, promptTokensUpperBound } from '../../core/tokens.js';
import type { ChatRequest } from '../../core/chat-types.js';
import type { RequestContext, Target } from '../../core/context.js';
import type { PluginDeps } from '../../core/pipeline.js';
import type { Provider } from '../../core/provider.js';
import type { GatewayError } from '../../core/errors.js';

function model(provider: string, id: string, input: number, output: number, quality: number, extra: Partial<CatalogModel> = {}): CatalogModel {
  const base = bareModel(provider, id);
  return {
    ...base,
    price: { input: input * 1e-6, output: output * 1e-6, cached_input: null, cache_write: null },
    quality: { score: quality, estimated: false, source: 'test' },
    context_window: 100_000,
    max_output_tokens: 4096,
    nominal_latency_ms: 1000,
    ...extra,
    capabilities: { ...base.capabilities, ...extra.capabilities },
  };
}

const MODELS = [
  model('openai', 'alpha', 1, 2, 0.9, { nominal_latency_ms: 500 }),
  model('anthropic', 'beta', 0.5, 1, 0.85, { nominal_latency_ms: 800 }),
  model('google', 'gamma', 0.1, 0.2, 0.7, { nominal_latency_ms: 300 }),
  model('mistral', 'delta', 3, 6, 0.95, { nominal_latency_ms: 1200, capabilities: { tools: false } as CatalogModel['capabilities'] }),
  model('cohere', 'epsilon', 0.2, 0.4, 0.82, { nominal_latency_ms: 400, context_window: 1000, capabilities: { vision: false, json_schema: false } as CatalogModel['capabilities'] }),
  model('openai', 'duo', 1, 1, 0.9),
  model('custom', 'duo', 1, 1, 0.9),
];

function provider(name: string, configured = true): Provider {
  return { name, configured, baseUrl: 'http://x', acceptsUnlistedModels: name === 'custom' } as Provider;
}

interface Setup {
  settings?: Record<string, unknown>;
  unconfigured?: string[];
  health?: HealthRegistry;
  models?: CatalogModel[];
}

async function makeRouter(setup: Setup = {}) {
  const providers = new Map(['openai', 'anthropic', 'google', 'cohere', 'mistral', 'custom'].map((name) => [name, provider(name, !setup.unconfigured?.includes(name))]));
  const health = setup.health ?? new HealthRegistry();
  const settings = {
    MODELGATE_ROUTING_STRATEGY: 'cost_optimized',
    MODELGATE_MAX_COST_PER_REQUEST: 1,
    MODELGATE_QUALITY_THRESHOLD: 0.8,
    MODELGATE_RESPONSE_TIME_LIMIT: 5000,
    MODELGATE_COST_OPTIMIZATION: true,
    MODELGATE_PROVIDER_WEIGHTS: [],
    MODELGATE_ROUTING_EXPLORATION: 0,
    ...setup.settings,
  };
  const plugin = await router.create(settings, { catalog: new Catalog(setup.models ?? MODELS), providers, health } as unknown as PluginDeps);
  const names = (targets: readonly Target[]) => targets.map((target) => `${target.provider.name}/${target.model.id}`);
  async function candidates(body: Partial<ChatRequest>, overrides: Overrides = {}): Promise<Target[]> {
    const request = { model: 'auto', messages: [{ role: 'user', content: 'Hello there' }], ...body } as ChatRequest;
    const raw = JSON.stringify(request);
    const ctx = {
      chat: {
        body: request,
        overrides,
        stream: false,
        includeUsage: false,
        maxOutputTokens: request.max_tokens ?? undefined,
        expectedOutputTokens: request.max_tokens ?? 100,
        promptTokens: estimatePromptTokens(request),
        promptTokensUpperBound: promptTokensUpperBound(request, raw.length),
      },
    } as unknown as RequestContext;
    await plugin.step!.handle(ctx, async () => {});
    return ctx.candidates!;
  }
  return {
    health,
    route: async (body: Partial<ChatRequest>, overrides: Overrides = {}): Promise<string[]> => names(await candidates(body, overrides)),
    /** The targets the failover step tries with at most `limit` candidates. */
    tried: async (limit: number, body: Partial<ChatRequest>, overrides: Overrides = {}): Promise<string[]> => names(failoverChain(await candidates(body, overrides), limit)),
  };
}

const refusal = async (promise: Promise<unknown>): Promise<GatewayError> => {
  try {
    await promise;
  } catch (error) {
    return error as GatewayError;
  }
  throw new Error('expected a refusal');
};

t.test('each strategy ranks auto as its definition says (table)', async (t) => {
  const busy = new HealthRegistry();
  busy.record({ provider: 'anthropic', model: 'beta', stream: false, ok: true, latencyMs: 100 });
  busy.record({ provider: 'mistral', model: 'delta', stream: false, ok: true, latencyMs: 9000 });
  const table: Array<[string, Setup, string[]]> = [
    ['cost: cheapest estimate first, quality below 0.8 left out', {}, ['cohere/epsilon', 'anthropic/beta', 'openai/duo|custom/duo', 'openai/alpha', 'mistral/delta']],
    ['quality: best first', { settings: { MODELGATE_ROUTING_STRATEGY: 'quality_optimized' } }, ['mistral/delta', 'openai/duo|custom/duo', 'openai/alpha', 'anthropic/beta', 'cohere/epsilon']],
    [
      'quality: a model observed slower than response_time_limit goes after the rest',
      { settings: { MODELGATE_ROUTING_STRATEGY: 'quality_optimized' }, health: busy },
      ['openai/duo|custom/duo', 'openai/alpha', 'anthropic/beta', 'cohere/epsilon', 'mistral/delta'],
    ],
    ['performance: nominal latency before any traffic', { settings: { MODELGATE_ROUTING_STRATEGY: 'performance_optimized' } }, ['cohere/epsilon', 'openai/alpha', 'anthropic/beta', 'openai/duo|custom/duo', 'mistral/delta']],
    ['performance: observed latency wins over nominal', { settings: { MODELGATE_ROUTING_STRATEGY: 'performance_optimized' }, health: busy }, ['anthropic/beta', 'cohere/epsilon', 'openai/alpha', 'openai/duo|custom/duo', 'mistral/delta']],
  ];
  for (const [name, setup, expected] of table) {
    const { route } = await makeRouter(setup);
    const got = await route({});
    // The two `duo` entries are equally good: their order is the provider-weight draw.
    const normalized = got.map((entry) => (entry.endsWith('/duo') ? 'openai/duo|custom/duo' : entry)).filter((entry, i, all) => all.indexOf(entry) === i);
    t.same(normalized, expected, name);
  }
});

t.test("performance: a model never used takes its provider's observed latency", async (t) => {
  const health = new HealthRegistry();
  health.record({ provider: 'openai', model: 'duo', stream: false, ok: true, latencyMs: 50 });
  const { route } = await makeRouter({ settings: { MODELGATE_ROUTING_STRATEGY: 'performance_optimized' }, health });
  const order = await route({});
  t.same(order.slice(0, 2).sort(), ['openai/alpha', 'openai/duo'], 'alpha inherits openai\'s 50 ms instead of its nominal 500');
});

t.test('the request constrains the candidates', async (t) => {
  const { route } = await makeRouter();
  const tools = [{ type: 'function' as const, function: { name: 'f', parameters: {} } }];
  t.notOk((await route({ tools })).includes('mistral/delta'), 'tools need tool calling');
  const image = [{ role: 'user' as const, content: [{ type: 'image_url' as const, image_url: { url: 'https://x/y.png' } }] }];
  t.notOk((await route({ messages: image })).includes('cohere/epsilon'), 'images need vision');
  t.notOk((await route({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } })).includes('cohere/epsilon'), 'json_schema needs structured output');
  t.notOk((await route({ messages: [{ role: 'user', content: 'word '.repeat(1500) }] })).includes('cohere/epsilon'), 'a prompt over the context window');
  t.ok((await route({ messages: [{ role: 'user', content: 'word '.repeat(150) }] })).includes('cohere/epsilon'), 'a prompt within it');
});

t.test('max_cost_per_request keeps auto and fallbacks within the cap; the named model is the cost guard\'s to judge', async (t) => {
  const { route } = await makeRouter({ settings: { MODELGATE_MAX_COST_PER_REQUEST: 0.00005 } });
  // ~10 prompt tokens and 100 output tokens: epsilon ~$0.00004, beta ~$0.0001.
  t.same(await route({}), ['cohere/epsilon']);
  t.same(await route({ model: 'alpha' }, { failover: { fallback_models: ['beta', 'epsilon'] } }), ['openai/alpha', 'cohere/epsilon']);
  t.same(await route({}, { routing: { max_cost_per_request: 1 } }), ['cohere/epsilon'], 'a request cannot lift the operator cap');
  const loose = await makeRouter();
  t.equal((await loose.route({})).length, 6);
  t.same(await loose.route({}, { routing: { max_cost_per_request: 0.00005 } }), ['cohere/epsilon'], 'but may tighten it');
  const none = await refusal(route({}, { routing: { max_cost_per_request: 0.000001 } }));
  t.match(none, { status: 400, code: 'no_model_fits', message: /estimated cost over max_cost_per_request: openai\/alpha \(estimated \$0.000208 > \$0.000001\)/ });
});

t.test('a named model ranks the providers serving it; weights split ties', async (t) => {
  const { route } = await makeRouter({ settings: { MODELGATE_PROVIDER_WEIGHTS: ['openai:3', 'custom:1'] } });
  let openaiFirst = 0;
  const draws = 2000;
  for (let i = 0; i < draws; i++) if ((await route({ model: 'duo' }))[0] === 'openai/duo') openaiFirst++;
  t.ok(Math.abs(openaiFirst / draws - 0.75) < 0.05, `openai first in ${openaiFirst} of ${draws} (weight 3:1)`);
  t.same(await route({ model: 'custom/duo' }), ['custom/duo'], 'provider/model pins');
  t.same(await route({ model: 'custom/my-local-llama' }), ['custom/my-local-llama'], 'the custom provider serves models the catalog does not list');
  t.equal((await refusal(route({ model: 'openai/nope' }))).status, 404);
  t.equal((await refusal(route({ model: 'nope' }))).message, 'Model not found');
});

t.test("the client's fallbacks extend the chain", async (t) => {
  const { route } = await makeRouter();
  t.same(await route({ model: 'alpha' }, { failover: { fallback_models: ['delta', 'beta'] } }), ['openai/alpha', 'mistral/delta', 'anthropic/beta']);
  t.same(await route({ model: 'alpha' }, { failover: { fallback_providers: ['anthropic', 'cohere'] } }), ['openai/alpha', 'anthropic/beta', 'cohere/epsilon'], "each fallback provider's best fit");
  t.same(await route({ model: 'duo' }, { failover: { fallback_models: ['alpha', 'duo'] } }).then((chain) => chain.length), 3, 'duplicates are dropped');
  const unknown = await refusal(route({ model: 'alpha' }, { failover: { fallback_models: ['nope'] } }));
  t.match(unknown, { status: 404, param: 'modelgate.failover.fallback_models[0]' });
  t.match(await refusal(route({ model: 'alpha' }, { failover: { fallback_providers: ['acme'] } })), { status: 400, param: 'modelgate.failover.fallback_providers[0]' });
});

t.test("the failover chain keeps the client's fallbacks within its limit, however long auto's ranking", async (t) => {
  const { tried } = await makeRouter({ models: MODELS.filter((m) => m.provider !== 'custom') });
  // auto's ranking, cheapest first: cohere/epsilon, anthropic/beta, openai/duo, openai/alpha, mistral/delta.
  const table: Array<[string, number, Overrides, string[]]> = [
    ['no fallbacks: the ranking, cut at the limit', 3, {}, ['cohere/epsilon', 'anthropic/beta', 'openai/duo']],
    ['a fallback auto leaves out (quality 0.7)', 3, { failover: { fallback_models: ['gamma'] } }, ['cohere/epsilon', 'anthropic/beta', 'google/gamma']],
    ['a fallback ranked after the cut', 3, { failover: { fallback_models: ['delta'] } }, ['cohere/epsilon', 'anthropic/beta', 'mistral/delta']],
    ["a fallback provider's best fit", 3, { failover: { fallback_providers: ['mistral'] } }, ['cohere/epsilon', 'anthropic/beta', 'mistral/delta']],
    ['more fallbacks than room: the best ranked, then the fallbacks in order', 2, { failover: { fallback_models: ['gamma', 'delta'] } }, ['cohere/epsilon', 'google/gamma']],
    ['a fallback already among the best ranked: its slot goes to the next', 3, { failover: { fallback_models: ['epsilon'] } }, ['cohere/epsilon', 'anthropic/beta', 'openai/duo']],
    ['a limit of 1 (failover off): the best ranked only', 1, { failover: { fallback_models: ['gamma'] } }, ['cohere/epsilon']],
  ];
  for (const [name, limit, overrides, expected] of table) t.same(await tried(limit, {}, overrides), expected, name);
  const unmarked = [{ provider: { name: 'a' }, model: { id: 'x' } }, { provider: { name: 'b' }, model: { id: 'y' } }] as Target[];
  t.same(failoverChain(unmarked, 1), unmarked.slice(0, 1), 'a chain the router did not build is cut as it is');
});

t.test('a fallback the client named may be unpriced (the cost guard decides); a fallback provider\'s best fit is priced', async (t) => {
  const unpriced = { ...model('anthropic', 'zeta', 0, 0, 0.99), price: { input: null, output: null, cached_input: null, cache_write: null } };
  const { route } = await makeRouter({ models: [...MODELS, unpriced], settings: { MODELGATE_ROUTING_STRATEGY: 'quality_optimized' } });
  t.same(await route({ model: 'alpha' }, { failover: { fallback_models: ['zeta'] } }), ['openai/alpha', 'anthropic/zeta'], 'named in fallback_models: kept');
  t.same(await route({ model: 'alpha' }, { failover: { fallback_models: ['custom/my-local-llama'] } }), ['openai/alpha', 'custom/my-local-llama'], 'an unlisted model, named: kept');
  t.same(await route({ model: 'alpha' }, { failover: { fallback_providers: ['anthropic'] } }), ['openai/alpha', 'anthropic/beta'], "the provider's best fit is priced, though zeta ranks higher on quality");
  t.notOk((await route({})).includes('anthropic/zeta'), 'auto never picks it');
});

t.test('when nothing fits, the answer says why', async (t) => {
  const strict = await makeRouter({ settings: { MODELGATE_QUALITY_THRESHOLD: 0.99 } });
  const none = await refusal(strict.route({}));
  t.equal(none.status, 400);
  t.equal(none.code, 'no_model_fits');
  t.match(none.message, /^No model fits this request — below quality_threshold: openai\/alpha \(quality 0.9 < 0.99\), .* and 4 more\.$/);

  const unconfigured = await makeRouter({ unconfigured: ['openai', 'custom'] });
  const unavailable = await refusal(unconfigured.route({ model: 'alpha' }));
  t.same([unavailable.status, unavailable.message], [404, 'Model unavailable']);

  const health = new HealthRegistry();
  health.setCircuit('openai', 'open', Date.now() + 30_000);
  const open = await makeRouter({ health });
  const down = await refusal(open.route({ model: 'alpha' }));
  t.same([down.status, down.message, down.code], [503, 'Provider unavailable', 'circuit_open']);
  t.match(down.headers['retry-after'], /^(29|30)$/);
  health.setCircuit('openai', 'open', Date.now() - 1);
  t.same(await open.route({ model: 'alpha' }), ['openai/alpha'], 'once the recovery timeout passed, the probe may go');

  health.coolDown('anthropic', 'beta', 5000);
  t.notOk((await open.route({})).includes('anthropic/beta'), 'a provider+model that asked to retry later is skipped');
  health.coolDown('custom', 'duo', 5000);
  t.same(await open.route({ model: 'duo' }), ['openai/duo'], "a cooldown is the model's: the same model elsewhere still routes");
  const cooling = await refusal(open.route({ model: 'custom/duo' }));
  t.same([cooling.status, cooling.code], [503, 'provider_cooling_down']);
  t.match(cooling.headers['retry-after'], /^[45]$/);
  t.same(await open.route({ model: 'custom/other' }), ['custom/other'], "the provider's other models are not held back");
});

t.test('overrides come from the body or headers, the body winning; bad ones are 400s naming them', async (t) => {
  const parse = compileOverrides([...router.overrides!, ...failover.overrides!]);
  t.same(parse(undefined, { 'x-modelgate-strategy': 'quality_optimized', 'x-modelgate-fallback-models': 'a, b', 'x-modelgate-failover': 'false' }), {
    routing: { strategy: 'quality_optimized' },
    failover: { fallback_models: ['a', 'b'], enabled: false },
  });
  t.same(parse({ routing: { strategy: 'cost_optimized' } }, { 'x-modelgate-strategy': 'quality_optimized', 'x-modelgate-max-cost': '0.5' }), {
    routing: { strategy: 'cost_optimized', max_cost_per_request: 0.5 },
  });
  const bad = (body: unknown, headers: Record<string, string>) => {
    try {
      parse(body, headers);
    } catch (error) {
      return error as GatewayError;
    }
    throw new Error('expected a refusal');
  };
  t.match(bad(undefined, { 'x-modelgate-strategy': 'fastest' }), { status: 400, param: 'x-modelgate-strategy' });
  t.match(bad(undefined, { 'x-modelgate-retry-attempts': 'many' }), { status: 400, param: 'x-modelgate-retry-attempts' });
  t.match(bad({ routing: { quality_threshold: 2 } }, {}), { status: 400, param: 'modelgate.routing.quality_threshold' });
  t.match(bad({ routing: { speed: 'max' } }, {}), { status: 400, param: 'modelgate.routing.speed', message: /Unknown override/ });
  t.match(bad({ teleport: {} }, {}), { status: 400, param: 'modelgate.teleport' });
});
