// The model catalog: data from config/models.json, extended or overridden by an operator's file
// (MODELGATE_MODEL_CATALOG) and by models a provider declares (e.g. CUSTOM_MODELS). Answers "which
// entries does this name mean" and "what does this usage cost".
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { lazyValidator } from './lazy-validator.js';
import { projectRoot } from './paths.js';
import { defineSettings } from './settings.js';
import type { Usage } from './chat-types.js';

export const catalogSettings = defineSettings({
  MODELGATE_MODEL_CATALOG: {
    type: 'string',
    description:
      'Path of a JSON file {"models":[...]} whose entries override catalog models (matched by provider and id, fields merged) or add new ones. See docs/catalog.md.',
  },
});

export interface Prices {
  input: number | null;
  output: number | null;
  cached_input: number | null;
  cache_write: number | null;
}

export interface CatalogModel {
  id: string;
  provider: string;
  native_id: string;
  aliases: string[];
  price: Prices & { long_context?: Prices & { above_prompt_tokens: number } };
  context_window: number | null;
  max_output_tokens: number | null;
  capabilities: { tools: boolean; vision: boolean; json: boolean; json_schema: boolean; reasoning: boolean; prompt_caching: boolean };
  quality: { score: number; estimated: boolean; source: string };
  nominal_latency_ms: number;
  /** What the model does: chat (the default when absent) or embeddings. Routing never mixes them. */
  kind?: 'chat' | 'embedding';
  /** Embedding models: the length of the vectors they return by default. */
  dimensions?: number;
}

/** A model's kind; entries without one are chat models. */
export function kindOf(model: CatalogModel): 'chat' | 'embedding' {
  return model.kind ?? 'chat';
}

export class Catalog {
  readonly models: readonly CatalogModel[];
  private readonly byName = new Map<string, CatalogModel[]>();

  constructor(models: CatalogModel[]) {
    this.models = models;
    for (const model of models) {
      for (const name of [model.id, ...model.aliases]) {
        const list = this.byName.get(name) ?? [];
        if (!list.includes(model)) list.push(model);
        this.byName.set(name, list);
      }
    }
  }

  /** Every entry (one per provider serving it) that `name` — an id or alias — means. */
  find(name: string): readonly CatalogModel[] {
    return this.byName.get(name) ?? [];
  }

  /** The entry of `name` served by `provider`. */
  get(provider: string, name: string): CatalogModel | undefined {
    return this.find(name).find((model) => model.provider === provider);
  }
}

const modelSchema = {
  type: 'object',
  required: ['id', 'provider'],
  properties: {
    id: { type: 'string', minLength: 1 },
    provider: { type: 'string', minLength: 1 },
    native_id: { type: 'string', minLength: 1 },
    aliases: { type: 'array', items: { type: 'string' } },
    price: {
      type: 'object',
      properties: {
        input: { type: ['number', 'null'], minimum: 0 },
        output: { type: ['number', 'null'], minimum: 0 },
        cached_input: { type: ['number', 'null'], minimum: 0 },
        cache_write: { type: ['number', 'null'], minimum: 0 },
      },
    },
    context_window: { type: ['integer', 'null'], minimum: 1 },
    max_output_tokens: { type: ['integer', 'null'], minimum: 1 },
    capabilities: { type: 'object', additionalProperties: { type: 'boolean' } },
    quality: { type: 'object', properties: { score: { type: 'number', minimum: 0, maximum: 1 }, source: { type: 'string' } } },
    nominal_latency_ms: { type: 'number', minimum: 0 },
    kind: { enum: ['chat', 'embedding'] },
    dimensions: { type: 'integer', minimum: 1 },
  },
};
// Only an operator's catalog file (MODELGATE_MODEL_CATALOG) is checked: compiled when there is one.
const validateFile = lazyValidator(() =>
  new Ajv({ allErrors: true, allowUnionTypes: true }).compile({
    type: 'object',
    required: ['models'],
    properties: { models: { type: 'array', items: modelSchema } },
  }),
);

/** A model known only by name (an operator's or a custom server's): nothing assumed, price unknown. */
export function bareModel(provider: string, id: string): CatalogModel {
  return {
    id,
    provider,
    native_id: id,
    aliases: [],
    price: { input: null, output: null, cached_input: null, cache_write: null },
    context_window: null,
    max_output_tokens: null,
    capabilities: { tools: true, vision: true, json: true, json_schema: true, reasoning: false, prompt_caching: false },
    quality: { score: 0, estimated: true, source: 'not scored: set quality.score in MODELGATE_MODEL_CATALOG' },
    nominal_latency_ms: 1000,
  };
}

type Override = Partial<Omit<CatalogModel, 'price' | 'capabilities' | 'quality'>> & {
  id: string;
  provider: string;
  price?: Partial<CatalogModel['price']>;
  capabilities?: Partial<CatalogModel['capabilities']>;
  quality?: Partial<CatalogModel['quality']>;
};

export function loadCatalog(options: { file?: string; extra?: readonly { provider: string; id: string }[] } = {}): Catalog {
  const base = JSON.parse(readFileSync(join(projectRoot, 'config', 'models.json'), 'utf8')) as { models: CatalogModel[] };
  const models = new Map(base.models.map((model) => [`${model.provider}/${model.id}`, model]));
  for (const { provider, id } of options.extra ?? []) {
    if (!models.has(`${provider}/${id}`)) models.set(`${provider}/${id}`, bareModel(provider, id));
  }
  if (options.file) {
    for (const entry of readOverrides(options.file)) {
      const key = `${entry.provider}/${entry.id}`;
      const current = models.get(key) ?? bareModel(entry.provider, entry.id);
      models.set(key, {
        ...current,
        ...entry,
        price: { ...current.price, ...entry.price },
        capabilities: { ...current.capabilities, ...entry.capabilities },
        quality: { ...current.quality, estimated: false, source: 'operator catalog file', ...entry.quality },
      });
    }
  }
  return new Catalog([...models.values()]);
}

function readOverrides(file: string): Override[] {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new CatalogFileError(`cannot read ${file}: ${(error as Error).message}`);
  }
  if (!validateFile(data)) {
    const first = validateFile.errors?.[0];
    throw new CatalogFileError(`${file}${first?.instancePath ?? ''} ${first?.message ?? 'is invalid'}`);
  }
  return (data as { models: Override[] }).models;
}

export class CatalogFileError extends Error {
  override name = 'CatalogFileError';
}

/** Whether the catalog knows what a request on this model costs. */
export function isPriced(model: CatalogModel): boolean {
  return model.price.input !== null && model.price.output !== null;
}

/**
 * USD for `usage` on `model`: uncached prompt tokens at the input price, cached ones at the cached
 * price, cache writes at the write price, completion at the output price; above a long-context
 * threshold the whole request takes the long-context prices. Undefined when the price is unknown.
 */
export function costOf(model: CatalogModel, usage: Usage): number | undefined {
  if (!isPriced(model)) return undefined;
  const long = model.price.long_context;
  const tier: Prices = long && usage.prompt_tokens > long.above_prompt_tokens ? { ...model.price, ...withoutNulls(long) } : model.price;
  const input = tier.input as number;
  const cached = Math.min(usage.prompt_tokens_details?.cached_tokens ?? 0, usage.prompt_tokens);
  const written = Math.min(usage.prompt_tokens_details?.cache_write_tokens ?? 0, usage.prompt_tokens - cached);
  const uncached = usage.prompt_tokens - cached - written;
  return (
    uncached * input +
    cached * (tier.cached_input ?? input) +
    written * (tier.cache_write ?? input) +
    usage.completion_tokens * (tier.output as number)
  );
}

function withoutNulls(prices: Prices): Partial<Prices> {
  return Object.fromEntries(Object.entries(prices).filter(([, value]) => value !== null)) as Partial<Prices>;
}
