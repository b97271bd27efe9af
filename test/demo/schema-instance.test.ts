// What the demo's simulated models answer for a JSON Schema validates against it, as a strict client
// checks it (ajv): nested objects, arrays within their bounds, enums, formats, patterns, numbers
// within min/max and multipleOf, references (recursive ones too, where depth is bounded), and the
// allOf / anyOf / oneOf combinators — and reads like an answer to the prompt, not like noise.
import t from 'tap';
import { instanceOf } from '../../demo/schema-instance.js';
import { schemaErrors } from '../helpers/json-schema.js';

const SCHEMAS: Record<string, Record<string, unknown>> = {
  'a flat object with required and optional properties': {
    type: 'object',
    properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1, maximum: 14 }, metric: { type: 'boolean' } },
    required: ['city'],
    additionalProperties: false,
  },
  'nested objects and arrays with bounds and unique items': {
    type: 'object',
    properties: {
      order: {
        type: 'object',
        properties: {
          id: { type: 'string', format: 'uuid' },
          placed_at: { type: 'string', format: 'date-time' },
          customer: { type: 'object', properties: { name: { type: 'string', minLength: 2 }, email: { type: 'string', format: 'email' } }, required: ['name', 'email'] },
          items: {
            type: 'array',
            minItems: 3,
            maxItems: 5,
            uniqueItems: true,
            items: {
              type: 'object',
              properties: { sku: { type: 'string', pattern: '^[A-Z]{3}-\\d{4}$' }, quantity: { type: 'integer', exclusiveMinimum: 0 }, price: { type: 'number', minimum: 0, multipleOf: 0.01 } },
              required: ['sku', 'quantity', 'price'],
            },
          },
        },
        required: ['id', 'placed_at', 'customer', 'items'],
      },
    },
    required: ['order'],
  },
  'enums, consts and nullable unions': {
    type: 'object',
    properties: {
      sentiment: { type: 'string', enum: ['positive', 'neutral', 'negative'] },
      version: { const: 2 },
      score: { type: ['number', 'null'], minimum: -1, maximum: 1 },
      tags: { type: 'array', items: { enum: ['a', 'b', 'c'] }, uniqueItems: true, minItems: 2 },
    },
    required: ['sentiment', 'version', 'score', 'tags'],
  },
  'string formats and lengths': {
    type: 'object',
    properties: {
      site: { type: 'string', format: 'uri' },
      day: { type: 'string', format: 'date' },
      at: { type: 'string', format: 'time' },
      host: { type: 'string', format: 'hostname' },
      v4: { type: 'string', format: 'ipv4' },
      v6: { type: 'string', format: 'ipv6' },
      stay: { type: 'string', format: 'duration' },
      code: { type: 'string', minLength: 6, maxLength: 6 },
      summary: { type: 'string', maxLength: 12 },
      zip: { type: 'string', pattern: '^\\d{5}(-\\d{4})?$' },
    },
    required: ['site', 'day', 'at', 'host', 'v4', 'v6', 'stay', 'code', 'summary', 'zip'],
  },
  'numbers at their bounds': {
    type: 'object',
    properties: {
      probability: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
      age: { type: 'integer', minimum: 100, maximum: 120 },
      step: { type: 'number', multipleOf: 0.25, minimum: 3.1, maximum: 3.6 },
      negative: { type: 'integer', maximum: -5 },
      narrow: { type: 'integer', exclusiveMinimum: 7, exclusiveMaximum: 9 },
    },
    required: ['probability', 'age', 'step', 'negative', 'narrow'],
  },
  'a recursive tree through $defs, bounded in depth': {
    type: 'object',
    $defs: { node: { type: 'object', properties: { label: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } }, required: ['label', 'children'] } },
    properties: { root: { $ref: '#/$defs/node' } },
    required: ['root'],
  },
  'a recursive list ended by a nullable link': {
    type: 'object',
    $defs: { link: { type: 'object', properties: { value: { type: 'integer' }, next: { anyOf: [{ $ref: '#/$defs/link' }, { type: 'null' }] } }, required: ['value', 'next'] } },
    properties: { head: { $ref: '#/$defs/link' } },
    required: ['head'],
  },
  'allOf, oneOf and anyOf': {
    type: 'object',
    properties: {
      merged: { allOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { properties: { b: { type: 'integer', minimum: 10 } }, required: ['b'] }] },
      either: { oneOf: [{ type: 'string', format: 'email' }, { type: 'integer' }] },
      any: { anyOf: [{ type: 'null' }, { type: 'array', items: { type: 'string' }, minItems: 1 }] },
    },
    required: ['merged', 'either', 'any'],
  },
  'a map with open values, a tuple and minProperties': {
    type: 'object',
    properties: {
      scores: { type: 'object', additionalProperties: { type: 'number', minimum: 0, maximum: 10 }, minProperties: 2 },
      point: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], items: false },
    },
    required: ['scores', 'point'],
  },
  'draft-07 definitions and tuple items': {
    $schema: 'http://json-schema.org/draft-07/schema#',
    definitions: { money: { type: 'object', properties: { amount: { type: 'number', minimum: 0 }, currency: { type: 'string', pattern: '^[A-Z]{3}$' } }, required: ['amount', 'currency'] } },
    type: 'object',
    properties: { total: { $ref: '#/definitions/money' }, range: { type: 'array', items: [{ type: 'integer' }, { type: 'integer' }], additionalItems: false, minItems: 2 } },
    required: ['total', 'range'],
  },
};

for (const [what, schema] of Object.entries(SCHEMAS)) {
  t.test(`${what}: the instance validates`, async (t) => {
    const instance = instanceOf(schema, { prompt: 'Plan a trip to Kyoto for Ada' });
    t.equal(schemaErrors(schema, instance), null, JSON.stringify(instance));
  });
}

t.test('near the top optional properties are filled in and arrays have more than one item; deep down only what is required', async (t) => {
  const tree = instanceOf(SCHEMAS['a recursive tree through $defs, bounded in depth']) as { root: { children: unknown[] } };
  t.ok(tree.root.children.length >= 2, 'the first level has children');
  let depth = 0;
  for (let node: { children?: unknown[] } | undefined = tree.root; node?.children?.length; node = node.children[0] as typeof node) depth++;
  t.ok(depth < 10, `the tree stops (${depth} levels)`);
  const flat = instanceOf(SCHEMAS['a flat object with required and optional properties']) as Record<string, unknown>;
  t.same(Object.keys(flat).sort(), ['city', 'days', 'metric']);
});

t.test('values read like an answer to the prompt', async (t) => {
  const trip = instanceOf(
    { type: 'object', properties: { city: { type: 'string' }, traveller: { type: 'object', properties: { name: { type: 'string' }, email: { type: 'string' } } }, summary: { type: 'string' } } },
    { prompt: "What's the weather in Oslo?", prose: 'Cold and clear.' },
  ) as { city: string; traveller: { email: string }; summary: string };
  t.equal(trip.city, 'Oslo', 'a place named in the prompt');
  t.match(trip.traveller.email, /^[^@\s]+@[^@\s]+\.\w+$/, 'an e-mail address for a property named email');
  t.equal(trip.summary, 'Cold and clear.', 'free text is the prose answer');
});

t.test('an empty or absent schema still gives a value', async (t) => {
  t.type(instanceOf({}), 'string');
  t.same(instanceOf({ type: 'object' }), {});
});

t.test("a hostile schema costs the demo's process little: work, sizes and folds are bounded", async (t) => {
  const hostile: Record<string, Record<string, unknown>> = {
    'requires itself twice': { type: 'object', required: ['l', 'r'], properties: { l: { $ref: '#' }, r: { $ref: '#' } } },
    'requires itself three times': { type: 'object', required: ['a', 'b', 'c'], properties: { a: { $ref: '#' }, b: { $ref: '#' }, c: { $ref: '#' } } },
    'folds into itself': { allOf: [{ $ref: '#' }] },
    'a choice of itself': { anyOf: [{ $ref: '#' }] },
    'a billion items': { type: 'array', minItems: 1e9, items: { type: 'string' } },
    'a billion properties': { type: 'object', minProperties: 1e9, additionalProperties: { type: 'string' } },
    'a huge string': { type: 'string', minLength: 3e8 },
    'a huge pattern repeat': { type: 'string', pattern: '^a{100000000}$' },
  };
  for (const [name, schema] of Object.entries(hostile)) {
    const started = performance.now();
    const instance = instanceOf(schema);
    const size = JSON.stringify(instance ?? null).length;
    t.ok(performance.now() - started < 2000, `${name}: answered in bounded time`);
    t.ok(size < 1_000_000, `${name}: a bounded answer (${size} bytes)`);
  }
});
