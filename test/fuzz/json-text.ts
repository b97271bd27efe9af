// Hostile JSON, written as text rather than built as values: duplicate keys, `__proto__` as a
// plain key, numbers JSON allows but JavaScript rounds (1e999, 2^53 + 1), escaped lone surrogates
// and thousands of nesting levels cannot all be expressed by JSON.stringify of a JS value.
import type { Prng } from './prng.js';

/** What a generator may produce; `maxDepth` is lowered while deep nesting is a known defect. */
export interface ValueLimits {
  maxDepth: number;
  maxString: number;
}

export const str = (value: string): string => JSON.stringify(value);

/** An object from entries as given: keys may repeat, values are JSON text. */
export function objectText(entries: ReadonlyArray<readonly [string, string]>): string {
  return `{${entries.map(([key, value]) => `${str(key)}:${value}`).join(',')}}`;
}

export function arrayText(items: readonly string[]): string {
  return `[${items.join(',')}]`;
}

const NUMBERS = [
  '0', '-0', '1', '-1', '0.5', '2', '3', '1e308', '-1e308', '1e999', '-1e999', '5e-324', '1e-400', '9007199254740993',
  '123456789012345678901234567890', '-9223372036854775808', '4294967296', '2147483648', '0.1e1', '1E2', '1.0', '100000000',
];

const NAN_LIKE = ['NaN', 'Infinity', '-Infinity', 'nan', 'null', 'undefined', 'true', '0x10', '1e3', ' 1', '1 ', '', '-', '+1', '١٢٣'];

/** Keys that mean something to JavaScript objects, Ajv or a naive merge. */
export const POLLUTING_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__', '$ref', '$id'];

const SHORT_STRINGS = [
  '', ' ', 'user', 'auto', 'gpt-4o-mini', '\u0000', '\u0007\u001b[31m', '\r\n', '\ufeff', '\ufeffgpt-4o-mini', '\u202egpt', '\u200b',
  '../../etc/passwd', '..', '/', '%00', '%2e%2e%2f', '{{7*7}}', '${jndi:ldap://x}', "'; drop table ledger;--", '<script>', 'null',
  '模型', 'ＧＰＴ', '😀', '\u{10ffff}', 'a\u0000b', 'Ω̸̢͔', '\t',
];

/** A string value as JSON text, sometimes with escapes JSON allows but UTF-8 cannot carry. */
export function hostileString(rng: Prng, limits: ValueLimits): string {
  switch (rng.int(0, 6)) {
    case 0:
      return str(rng.pick(SHORT_STRINGS));
    case 1:
      return `"${rng.pick(['\\ud800', '\\udfff', '\\ud83d', '\\udc00\\ud800', 'a\\ud800b', '\\u0000', '\\uffff', '\\ufffe'])}"`;
    case 2:
      return str(rng.pick(['a', 'é', '模', '😀', ' ', '\n', '\\', '"', '\u0000']).repeat(rng.size(1, limits.maxString)));
    case 3:
      return str(rng.pick(NAN_LIKE));
    case 4:
      return str(`${rng.pick(SHORT_STRINGS)}${'x'.repeat(rng.size(0, 2000))}`);
    default:
      return str(Array.from({ length: rng.size(1, 64) }, () => String.fromCodePoint(rng.pick([rng.int(0, 0x7f), rng.int(0x80, 0xffff), rng.int(0x10000, 0x10ffff)]))).join(''));
  }
}

/** Nested arrays or objects, `depth` levels deep. */
export function nested(rng: Prng, depth: number): string {
  const kind = rng.int(0, 2);
  if (kind === 0) return '['.repeat(depth) + ']'.repeat(depth);
  if (kind === 1) return '{"a":'.repeat(depth) + 'null' + '}'.repeat(depth);
  return '[{"type":"text","text":'.repeat(depth) + '"x"' + '}]'.repeat(depth);
}

/** Any JSON value: every type, edge numbers, hostile strings, deep or wide containers, polluting keys. */
export function hostileValue(rng: Prng, limits: ValueLimits, depth = 0): string {
  const containers = depth < 3;
  switch (rng.int(0, containers ? 11 : 6)) {
    case 0:
      return 'null';
    case 1:
      return rng.pick(['true', 'false']);
    case 2:
    case 3:
      return rng.pick(NUMBERS);
    case 4:
    case 5:
    case 6:
      return hostileString(rng, limits);
    case 7:
      return rng.pick(['[]', '{}', '[null]', '[[]]', '[{}]', '{"":null}']);
    case 8:
      // Often near the limit: the depth at which recursion breaks is in the thousands.
      return nested(rng, rng.chance(0.3) ? rng.int(limits.maxDepth >> 1, limits.maxDepth) : rng.size(1, limits.maxDepth));
    case 9:
      return arrayText(Array.from({ length: rng.size(1, 20) }, () => hostileValue(rng, limits, depth + 1)));
    case 10:
      return objectText(Array.from({ length: rng.size(1, 8) }, () => [rng.pick([...POLLUTING_KEYS, 'type', 'text', 'a', '']), hostileValue(rng, limits, depth + 1)] as const));
    default:
      // Duplicate keys: JSON.parse keeps the last; a validator and a forwarder must agree on it.
      return objectText([['type', str('text')], ['text', hostileValue(rng, limits, depth + 1)], ['type', hostileValue(rng, limits, depth + 1)]]);
  }
}
