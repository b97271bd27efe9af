// The depth measure and the cache key's canonical JSON on their own, on input far deeper than any
// call stack: both walk with explicit stacks.
import t from 'tap';
import { textTooDeep, tooDeepPath } from '../../core/json-depth.js';
import { canonicalJson } from '../../plugins/cache/key.js';

const deep = (levels: number) => JSON.parse('['.repeat(levels) + ']'.repeat(levels)) as unknown;

t.test('the path to the first container past the limit, in document order', async (t) => {
  t.equal(tooDeepPath({ a: [[]] }, 3), undefined, 'exactly the limit is within it');
  t.same(tooDeepPath({ a: [[[]]] }, 3), ['a', 0, 0]);
  t.same(tooDeepPath({ a: 1, b: [{ c: {} }], d: [[[[]]]] }, 3), ['b', 0, 'c'], 'the first too-deep container in the text');
  t.equal(tooDeepPath('text', 1), undefined);
  t.same(tooDeepPath({ x: deep(1_000_000) }, 64)!.length, 64, 'a million levels: no stack overflow');
});

t.test('JSON text is measured outside its strings', async (t) => {
  t.equal(textTooDeep('{"a":[[1]]}', 3), false);
  t.equal(textTooDeep('{"a":[[[1]]]}', 3), true);
  t.equal(textTooDeep('{"a":"[[[[[[\\"[[[["}', 1), false, 'brackets in strings, escaped quotes included, do not count');
  t.equal(textTooDeep('['.repeat(1_000_000), 64), true);
});

t.test('canonical JSON sorts keys and drops null fields, at any depth', async (t) => {
  t.equal(canonicalJson({ b: 1, a: [null, { d: null, c: 'x' }], e: undefined }), '{"a":[null,{"c":"x"}],"b":1}');
  t.equal(canonicalJson([]), '[]');
  t.equal(canonicalJson({}), '{}');
  t.equal(canonicalJson('s'), '"s"');
  t.equal(canonicalJson(null), 'null');
  t.equal(canonicalJson([undefined, 1]), '[null,1]', 'as JSON writes undefined in arrays');
  const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }] };
  t.equal(canonicalJson(body), JSON.stringify(body, Object.keys(flatKeys(body)).sort()), 'sorted JSON of a body without nulls');
  // Past the recursion limit (256) the iterative walk takes over: the same text either way.
  let nested: unknown = { z: 1, a: 'end' };
  for (let i = 0; i < 300; i++) nested = { y: [i, nested], b: 'x' };
  t.equal(canonicalJson(nested), JSON.stringify(nested, Object.keys(flatKeys(nested)).sort()), 'a body deeper than the recursion limit');
  const levels = 200_000;
  t.equal(canonicalJson(deep(levels)), '['.repeat(levels) + ']'.repeat(levels), `${levels} levels: no stack overflow`);
});

t.test('canonical JSON orders keys as Array.prototype.sort orders strings, for few keys and many', async (t) => {
  const tricky = ['b', 'a', 'B', '', '10', '9', 'é', 'e\u0301', '\u{1F600}', '\uFFFF', 'aa', 'a\u0000', '_', 'Z'];
  for (const count of [2, 5, tricky.length]) {
    const names = tricky.slice(0, count);
    for (const order of [names, [...names].reverse()]) {
      const record = Object.fromEntries(order.map((name, i) => [name, i]));
      const expected = `{${[...Object.keys(record)].sort().map((name) => `${JSON.stringify(name)}:${record[name]}`).join(',')}}`;
      t.equal(canonicalJson(record), expected, `${count} keys`);
    }
  }
  const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${(i * 7919) % 40}`, i]));
  t.equal(canonicalJson(many), JSON.stringify(many, Object.keys(many).sort()), 'more than 16 keys');
});

/** Every key name in the value, for JSON.stringify's sorted allow-list. */
function flatKeys(value: unknown, into: Record<string, true> = {}): Record<string, true> {
  if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) (into[k] = true), flatKeys(v, into);
  return into;
}
