// Regenerates config/models.json (the model catalog) from config/sources/model-prices.json
// (litellm's chat prices, via shared/protocol), config/sources/model-prices-embeddings.json (its
// embedding prices) and config/sources/lmarena.json (arena positions and the documented
// estimates). Run: npm run catalog
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../core/paths.js';

interface PriceEntry {
  provider: string;
  model: string;
  input_cost_per_token: number;
  output_cost_per_token: number;
  cache_read_input_token_cost?: number;
  cache_creation_input_token_cost?: number;
  max_input_tokens: number;
  max_output_tokens: number;
  supports_function_calling: boolean;
  supports_vision: boolean;
  supports_response_schema: boolean;
  supports_reasoning: boolean;
  supports_prompt_caching: boolean;
  long_context_pricing?: Record<string, number>;
}
interface EmbeddingPriceEntry {
  provider: string;
  model: string;
  input_cost_per_token: number;
  /** Default vector length; null where litellm does not state it. */
  output_vector_size: number | null;
  max_input_tokens: number;
}
interface Ranked {
  arena_name?: string;
  rating: number;
  position: number;
}

const sources = join(projectRoot, 'config', 'sources');
const prices = JSON.parse(readFileSync(join(sources, 'model-prices.json'), 'utf8')) as { source: unknown; models: PriceEntry[] };
const embeddingPrices = JSON.parse(readFileSync(join(sources, 'model-prices-embeddings.json'), 'utf8')) as {
  source: unknown;
  native_endpoints: Record<string, string>;
  models: EmbeddingPriceEntry[];
};
const arena = JSON.parse(readFileSync(join(sources, 'lmarena.json'), 'utf8')) as {
  source: { models_ranked: number; commit: string };
  formula: string;
  estimates_rule: string;
  scored: Record<string, Ranked>;
  reference_only: Record<string, Ranked>;
  estimated: Record<string, { from: string; why: string }>;
  aliases: Record<string, string[]>;
};

const PROVIDER_NAMES: Record<string, string> = { gemini: 'google' };
const ranked = arena.source.models_ranked;
const percentile = (position: number) => Math.round(((ranked - position) / (ranked - 1)) * 1000) / 1000;

function findRanked(name: string): Ranked {
  const direct = arena.scored[name] ?? arena.reference_only[name];
  if (direct) return direct;
  const byArenaName = Object.values(arena.scored).find((entry) => entry.arena_name === name);
  if (byArenaName) return byArenaName;
  throw new Error(`no arena position for ${name}`);
}

function quality(id: string) {
  const scored = arena.scored[id];
  if (scored) {
    return {
      score: percentile(scored.position),
      estimated: false,
      source: `LMArena text, style control, overall: ${scored.arena_name} rated ${scored.rating}, #${scored.position}/${ranked} (arena-catalog ${arena.source.commit.slice(0, 8)})`,
    };
  }
  const estimate = arena.estimated[id];
  if (!estimate) throw new Error(`model ${id} has neither an arena score nor an estimate`);
  const from = findRanked(estimate.from);
  return {
    score: percentile(from.position),
    estimated: true,
    source: `estimate: inherits ${estimate.from} (#${from.position}/${ranked}); ${estimate.why}`,
  };
}

/** litellm's `*_above_272k_tokens` prices: they apply to the whole request once the prompt exceeds the threshold. */
function longContext(tiers: Record<string, number> | undefined) {
  if (!tiers) return {};
  const threshold = Object.keys(tiers).map((key) => /_above_(\d+)k_tokens$/.exec(key)?.[1]).find(Boolean);
  if (!threshold) return {};
  const at = (name: string) => tiers[`${name}_above_${threshold}k_tokens`] ?? null;
  return {
    long_context: {
      above_prompt_tokens: Number(threshold) * 1000,
      input: at('input_cost_per_token'),
      output: at('output_cost_per_token'),
      cached_input: at('cache_read_input_token_cost'),
      cache_write: at('cache_creation_input_token_cost'),
    },
  };
}

/** Nominal time to first token before any traffic is observed: an estimate by price class. */
function nominalLatencyMs(outputPrice: number): number {
  if (outputPrice < 1e-6) return 350;
  if (outputPrice < 5e-6) return 500;
  if (outputPrice < 1.5e-5) return 800;
  return 1200;
}

/**
 * A price entry whose model is another entry's alias (a dated release of a moving name, as
 * mistral-large-2512 is of mistral-large-latest) becomes that alias, not an entry of its own:
 * /v1/models would list one model twice, and routing would count it as two candidates. Its prices
 * must be the entry's, or the alias would be billed wrongly.
 */
const aliasOf = new Map(Object.entries(arena.aliases).flatMap(([id, names]) => names.map((name) => [name, id] as const)));
for (const entry of prices.models) {
  const owner = aliasOf.get(entry.model);
  const main = owner && prices.models.find((other) => other.model === owner && other.provider === entry.provider);
  if (main && (main.input_cost_per_token !== entry.input_cost_per_token || main.output_cost_per_token !== entry.output_cost_per_token)) {
    throw new Error(`${entry.model} is listed as an alias of ${owner} but is priced differently`);
  }
}

const models = prices.models.filter((entry) => !aliasOf.has(entry.model)).map((entry) => ({
  id: entry.model,
  provider: PROVIDER_NAMES[entry.provider] ?? entry.provider,
  native_id: entry.model,
  aliases: arena.aliases[entry.model] ?? [],
  price: {
    input: entry.input_cost_per_token,
    output: entry.output_cost_per_token,
    cached_input: entry.cache_read_input_token_cost ?? null,
    cache_write: entry.cache_creation_input_token_cost ?? null,
    ...longContext(entry.long_context_pricing),
  },
  context_window: entry.max_input_tokens,
  max_output_tokens: entry.max_output_tokens,
  capabilities: {
    tools: entry.supports_function_calling,
    vision: entry.supports_vision,
    json: true,
    json_schema: entry.supports_response_schema,
    reasoning: entry.supports_reasoning,
    prompt_caching: entry.supports_prompt_caching,
  },
  quality: quality(entry.model),
  nominal_latency_ms: nominalLatencyMs(entry.output_cost_per_token),
}));

/**
 * Embedding models of the providers the gateway has adapters for. `vertex` entries are left out: the
 * google adapter speaks the Gemini API, not Vertex AI. LMArena ranks chat models only, so these
 * are not scored; routing never offers them for chat (their kind), and output is never billed.
 */
const EMBEDDING_PROVIDERS = new Set(['openai', 'gemini', 'cohere', 'mistral']);
/** Dated releases of a moving name, as for chat models above: an alias of that entry, priced alike. */
const EMBEDDING_ALIASES: Record<string, string[]> = { 'codestral-embed': ['codestral-embed-2505'] };
const embeddingAliasOf = new Map(Object.entries(EMBEDDING_ALIASES).flatMap(([id, names]) => names.map((name) => [name, id] as const)));
/**
 * Prices the source itself flags as a likely data error (embed-multilingual-light-v3.0 at 1000x its
 * siblings): a bill built on them would be wrong, so the model is left out until a price is known
 * (an operator can add it with MODELGATE_MODEL_CATALOG).
 */
const DOUBTFUL_PRICES = new Set(['embed-multilingual-light-v3.0']);
const servedEmbeddings = embeddingPrices.models.filter((entry) => EMBEDDING_PROVIDERS.has(entry.provider) && !DOUBTFUL_PRICES.has(entry.model));
for (const entry of servedEmbeddings) {
  const owner = embeddingAliasOf.get(entry.model);
  const main = owner && servedEmbeddings.find((other) => other.model === owner && other.provider === entry.provider);
  if (owner && (!main || main.input_cost_per_token !== entry.input_cost_per_token)) {
    throw new Error(`${entry.model} is listed as an alias of ${owner} but ${main ? 'is priced differently' : 'that model is missing'}`);
  }
}
const embeddingModels = servedEmbeddings.filter((entry) => !embeddingAliasOf.has(entry.model)).map((entry) => ({
  id: entry.model,
  provider: PROVIDER_NAMES[entry.provider] ?? entry.provider,
  native_id: entry.model,
  aliases: EMBEDDING_ALIASES[entry.model] ?? [],
  kind: 'embedding' as const,
  ...(entry.output_vector_size != null ? { dimensions: entry.output_vector_size } : {}),
  price: { input: entry.input_cost_per_token, output: 0, cached_input: null, cache_write: null },
  context_window: entry.max_input_tokens,
  max_output_tokens: null,
  capabilities: { tools: false, vision: false, json: false, json_schema: false, reasoning: false, prompt_caching: false },
  quality: { score: 0, estimated: true, source: 'not scored: an embedding model (LMArena ranks chat models)' },
  nominal_latency_ms: nominalLatencyMs(0),
}));

const catalog = {
  about: {
    prices: prices.source,
    embedding_prices: embeddingPrices.source,
    units:
      'price: USD per token; context_window and max_output_tokens: tokens (an embedding model\'s context_window is per input); dimensions: default vector length of an embedding model; nominal_latency_ms: estimated time to first token by price class',
    quality_formula: arena.formula,
    quality_estimates: arena.estimates_rule,
    generated_by: 'scripts/build-catalog.ts',
  },
  models: [...models, ...embeddingModels],
};
writeFileSync(join(projectRoot, 'config', 'models.json'), `${JSON.stringify(catalog, null, 2)}\n`);
console.log(`wrote config/models.json: ${models.length} chat models, ${embeddingModels.length} embedding models`);
