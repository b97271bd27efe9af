// A plausible instance of a JSON Schema: what the simulated models answer for `json_schema`
// response formats and put in tool-call arguments, so a client that validates what it gets back
// (strict structured outputs, typed tool handlers) sees it pass. Objects get their required
// properties (and, near the top, their optional ones too), arrays a couple of distinct items within
// minItems..maxItems, enums and consts their value, leaves what plausible-values.ts guesses; $ref
// (local, to $defs or definitions), allOf, anyOf and oneOf are followed. Depth is bounded: past
// OPTIONAL_DEPTH only what the schema requires is built, and a schema that requires itself forever
// ends in null at GIVE_UP_DEPTH. Work is bounded too: a client's schema runs in the demo's own
// process, so an instance has at most MAX_VALUES values and MAX_ITEMS items per array or map,
// whatever minItems or minProperties ask, and $ref/allOf chains are folded at most MAX_FOLDS deep.
import { numberFor, stringFor, type ValueContext } from './plausible-values.js';

type Schema = Record<string, unknown>;

/** Below this depth optional properties are filled in and arrays get two items; beyond, only what is required. */
const OPTIONAL_DEPTH = 5;
/** A schema that still requires more nesting here has no finite instance worth building. */
const GIVE_UP_DEPTH = 24;
const ITEMS_NEAR_THE_TOP = 2;
/** Values in one instance: a schema requiring itself twice would otherwise double with each level. */
const MAX_VALUES = 5000;
/** Items of one array, or entries of one map, whatever its minimum. */
const MAX_ITEMS = 64;
/** Nested $ref / allOf / anyOf folds of one schema ({"allOf":[{"$ref":"#"}]} refers to itself). */
const MAX_FOLDS = 16;

export interface InstanceHints {
  /** The user's last message (names, places and queries come from it). */
  prompt?: string;
  /** The simulated prose answer, for free-text fields. */
  prose?: string;
}

export function instanceOf(schema: unknown, hints: InstanceHints = {}): unknown {
  return new Builder(schema).build(schema, 0, { index: 0, prompt: hints.prompt ?? '', prose: hints.prose ?? 'This is a simulated answer.' });
}

class Builder {
  private budget = MAX_VALUES;

  constructor(private readonly root: unknown) {}

  build(raw: unknown, depth: number, context: ValueContext): unknown {
    if (depth > GIVE_UP_DEPTH || --this.budget < 0) return null;
    if (raw === true || raw === undefined) return stringFor({}, context);
    if (!isSchema(raw)) return null; // `false` admits nothing
    const schema = this.flatten(raw, depth);
    if ('const' in schema) return schema.const;
    if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[context.index % schema.enum.length];
    switch (this.typeOf(schema, depth)) {
      case 'object':
        return this.object(schema, depth, context);
      case 'array':
        return this.array(schema, depth, context);
      case 'string':
        return stringFor(schema, context);
      case 'integer':
        return numberFor(schema, true, context);
      case 'number':
        return numberFor(schema, false, context);
      case 'boolean':
        return context.index % 2 === 0;
      default:
        return null;
    }
  }

  /** One schema with $ref resolved and allOf / anyOf / oneOf folded in (the first fitting option of a choice). */
  private flatten(schema: Schema, depth: number, folds = 0): Schema {
    let out = schema;
    if (folds > MAX_FOLDS) return out;
    for (let hops = 0; typeof out.$ref === 'string' && hops < 32; hops++) {
      const { $ref, ...siblings } = out;
      const target = this.resolve($ref as string);
      out = isSchema(target) ? merge(target, siblings) : siblings;
    }
    if (Array.isArray(out.allOf)) {
      const { allOf, ...rest } = out;
      out = (allOf as unknown[]).filter(isSchema).reduce<Schema>((merged, part) => merge(merged, this.flatten(part, depth, folds + 1)), rest);
    }
    for (const key of ['anyOf', 'oneOf'] as const) {
      if (!Array.isArray(out[key])) continue;
      const { [key]: options, ...rest } = out;
      const option = this.choose((options as unknown[]).filter(isSchema), depth);
      out = option ? merge(rest, this.flatten(option, depth, folds + 1)) : rest;
    }
    return out;
  }

  /** Near the top the first non-null option (the one the author thought of first); deep down, the one that ends soonest. */
  private choose(options: Schema[], depth: number): Schema | undefined {
    if (depth >= OPTIONAL_DEPTH) {
      const ending = options.find((option) => option.type === 'null') ?? options.find((option) => !JSON.stringify(option).includes('$ref'));
      if (ending) return ending;
    }
    return options.find((option) => option.type !== 'null') ?? options[0];
  }

  private resolve(ref: string): unknown {
    if (!ref.startsWith('#')) return undefined; // remote references: no network in a simulator
    let target: unknown = this.root;
    for (const token of ref.slice(1).split('/').filter(Boolean)) {
      const key = decodeURIComponent(token).replace(/~1/g, '/').replace(/~0/g, '~');
      target = isSchema(target) || Array.isArray(target) ? (target as Record<string, unknown>)[key] : undefined;
    }
    return target;
  }

  private typeOf(schema: Schema, depth: number): string | undefined {
    const type = schema.type;
    if (typeof type === 'string') return type;
    if (Array.isArray(type)) {
      const concrete = type.filter((t) => t !== 'null');
      // Deep in a nullable recursion, null ends it; elsewhere a real value reads better.
      if (type.includes('null') && (depth >= OPTIONAL_DEPTH || concrete.length === 0)) return 'null';
      return concrete[0] as string | undefined;
    }
    if ('properties' in schema || 'required' in schema || 'additionalProperties' in schema) return 'object';
    if ('items' in schema || 'prefixItems' in schema) return 'array';
    if ('minimum' in schema || 'maximum' in schema || 'multipleOf' in schema) return 'number';
    return 'string';
  }

  private object(schema: Schema, depth: number, context: ValueContext): Record<string, unknown> {
    const properties = isSchema(schema.properties) ? schema.properties : {};
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    const extra = isSchema(schema.additionalProperties) ? schema.additionalProperties : schema.additionalProperties === false ? undefined : {};
    const out: Record<string, unknown> = {};
    // Properties keep the item's index: the second object of a list gets the second name, enum value …
    const at = (name: string) => ({ ...context, name });
    for (const [name, property] of Object.entries(properties)) {
      if (required.has(name) || depth < OPTIONAL_DEPTH) out[name] = this.build(property, depth + 1, at(name));
    }
    for (const name of required) if (!(name in out)) out[name] = this.build(extra ?? {}, depth + 1, at(name));
    // A map (no declared properties, open values) near the top gets one entry, as a model would write.
    if (Object.keys(properties).length === 0 && isSchema(schema.additionalProperties) && depth < OPTIONAL_DEPTH && Object.keys(out).length === 0) {
      out[`${context.name ?? 'key'}_1`] = this.build(extra, depth + 1, at('value'));
    }
    const minProperties = Math.min(MAX_ITEMS, typeof schema.minProperties === 'number' ? schema.minProperties : 0);
    for (let i = 1; Object.keys(out).length < minProperties && extra !== undefined; i++) out[`extra_${i}`] = this.build(extra, depth + 1, at(`extra_${i}`));
    const maxProperties = typeof schema.maxProperties === 'number' ? schema.maxProperties : Infinity;
    for (const name of Object.keys(out).reverse()) {
      if (Object.keys(out).length <= maxProperties) break;
      if (!required.has(name)) delete out[name];
    }
    return out;
  }

  private array(schema: Schema, depth: number, context: ValueContext): unknown[] {
    // Draft 2020 tuples are prefixItems + items; draft 7 tuples an items array + additionalItems.
    const prefix = (Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : []) as unknown[];
    const rest = Array.isArray(schema.items) ? schema.additionalItems : schema.items;
    const min = typeof schema.minItems === 'number' ? schema.minItems : 0;
    const max = Math.min(typeof schema.maxItems === 'number' ? schema.maxItems : Infinity, rest === false ? prefix.length : Infinity);
    const wanted = Math.min(MAX_ITEMS, max, Math.max(min, depth < OPTIONAL_DEPTH ? Math.max(ITEMS_NEAR_THE_TOP, prefix.length) : 0));
    const items: unknown[] = [];
    const seen = new Set<string>();
    for (let index = 0; items.length < wanted && index < wanted + 8; index++) {
      const item = this.build(index < prefix.length ? prefix[index] : rest, depth + 1, { ...context, name: singular(context.name), index });
      const key = JSON.stringify(item);
      // uniqueItems: a repeat is skipped while enough distinct items can still come; the minimum is kept regardless.
      if (schema.uniqueItems === true && seen.has(key) && items.length >= min) continue;
      seen.add(key);
      items.push(item);
    }
    return items;
  }
}

/** Two schemas as one (allOf, a $ref's siblings, a choice and its parent): properties and required add up, bounds tighten. */
function merge(a: Schema, b: Schema): Schema {
  const out: Schema = { ...a };
  for (const [key, value] of Object.entries(b)) {
    const mine = out[key];
    if (key === 'properties' && isSchema(mine) && isSchema(value)) {
      const properties: Schema = { ...mine };
      for (const [name, property] of Object.entries(value)) properties[name] = name in mine ? { allOf: [mine[name], property] } : property;
      out.properties = properties;
    } else if (key === 'required' && Array.isArray(mine) && Array.isArray(value)) out.required = [...new Set([...mine, ...value])];
    else if ((key === 'minimum' || key === 'minLength' || key === 'minItems' || key === 'exclusiveMinimum') && typeof mine === 'number' && typeof value === 'number') out[key] = Math.max(mine, value);
    else if ((key === 'maximum' || key === 'maxLength' || key === 'maxItems' || key === 'exclusiveMaximum') && typeof mine === 'number' && typeof value === 'number') out[key] = Math.min(mine, value);
    else if (key === 'enum' && Array.isArray(mine) && Array.isArray(value)) out.enum = mine.filter((item) => value.some((other) => JSON.stringify(other) === JSON.stringify(item)));
    else if (key === 'type' && mine !== undefined) out.type = intersectTypes(mine, value);
    else out[key] = value;
  }
  return out;
}

function intersectTypes(a: unknown, b: unknown): unknown {
  const left = Array.isArray(a) ? a : [a];
  const right = Array.isArray(b) ? b : [b];
  const both = left.filter((type) => right.includes(type) || (type === 'integer' && right.includes('number')));
  const fromRight = right.filter((type) => type === 'integer' && left.includes('number'));
  const all = [...new Set([...both, ...fromRight])];
  return all.length === 1 ? all[0] : all.length > 0 ? all : b;
}

/** Items of `cities` are each a `city`: the name hints then apply to them. */
function singular(name: string | undefined): string | undefined {
  if (!name) return name;
  if (/ies$/.test(name)) return name.replace(/ies$/, 'y');
  if (/(ses|xes|ches|shes)$/.test(name)) return name.replace(/es$/, '');
  return name.replace(/s$/, '');
}

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
