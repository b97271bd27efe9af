// Leaf values of a simulated structured answer: strings and numbers that satisfy their schema
// (format, pattern, length, bounds, multipleOf) and read like what a model would put there, guessed
// from the property's name and the prompt: a `city` is a place named in the prompt, an `email` an
// address, an `age` a small whole number. The schema always wins over the guess.
import { samplePattern } from './pattern-sample.js';

export interface ValueContext {
  /** The property (or tool parameter) this value is for, when it has a name. */
  name?: string;
  /** Position in an array: items differ, so `uniqueItems` holds. */
  index: number;
  /** The user's last message: where names, places and queries come from. */
  prompt: string;
  /** The prose the simulated model would have answered: for free-text fields (answer, summary …). */
  prose: string;
}

type Schema = Record<string, unknown>;

/** Values by JSON Schema format (the ones ajv-formats and OpenAI's structured outputs know). */
const FORMATS: Record<string, (index: number) => string> = {
  'date-time': (i) => `2025-06-${String(1 + (i % 28)).padStart(2, '0')}T09:30:00Z`,
  date: (i) => `2025-06-${String(1 + (i % 28)).padStart(2, '0')}`,
  time: (i) => `${String(9 + (i % 12)).padStart(2, '0')}:30:00Z`,
  duration: (i) => `P${1 + i}D`,
  email: (i) => (i === 0 ? 'ada@example.com' : `user${i}@example.com`),
  'idn-email': (i) => (i === 0 ? 'ada@example.com' : `user${i}@example.com`),
  hostname: (i) => (i === 0 ? 'example.com' : `host${i}.example.com`),
  'idn-hostname': (i) => (i === 0 ? 'example.com' : `host${i}.example.com`),
  ipv4: (i) => `192.0.2.${10 + (i % 240)}`,
  ipv6: (i) => `2001:db8::${(16 + i).toString(16)}`,
  uri: (i) => `https://example.com/${i === 0 ? '' : `item/${i}`}`,
  'uri-reference': (i) => `/item/${i + 1}`,
  iri: (i) => `https://example.com/${i === 0 ? '' : `item/${i}`}`,
  'iri-reference': (i) => `/item/${i + 1}`,
  url: (i) => `https://example.com/${i === 0 ? '' : `item/${i}`}`,
  uuid: (i) => `3f2b8c1e-5d4a-4e6b-9a7c-${(0x1a2b3c4d5e6f + i).toString(16).padStart(12, '0')}`,
  'json-pointer': (i) => `/items/${i}`,
  'relative-json-pointer': (i) => String(i),
  regex: () => '^[a-z]+$',
  byte: (i) => Buffer.from(`example ${i}`).toString('base64'),
  'uri-template': () => 'https://example.com/items/{id}',
};

/** Free-text guesses by property name; the first matching entry wins. */
const TEXT_HINTS: Array<[RegExp, (context: ValueContext) => string]> = [
  [/e-?mail/, (c) => FORMATS.email!(c.index)],
  [/phone|mobile|tel$/, (c) => `+1 555 01${String(c.index).padStart(2, '0')}`],
  [/url|uri|link|website|homepage/, (c) => FORMATS.url!(c.index)],
  [/^(query|q|question|search|prompt|input|request|instruction)s?$/, (c) => c.prompt || 'example query'],
  [/city|town|location|place|destination|address|region|where/, (c) => properNoun(c.prompt, c.index) ?? ['Lisbon', 'Oslo', 'Kyoto'][c.index % 3]!],
  [/country/, (c) => ['Portugal', 'Norway', 'Japan'][c.index % 3]!],
  [/^(first_?)?name$|person|author|user_?name|customer|contact/, (c) => properNoun(c.prompt, c.index) ?? ['Ada Lovelace', 'Alan Turing', 'Grace Hopper'][c.index % 3]!],
  [/currency/, (c) => ['EUR', 'USD', 'JPY'][c.index % 3]!],
  [/lang(uage)?|locale/, (c) => ['en', 'pt', 'ja'][c.index % 3]!],
  [/colou?r/, (c) => ['blue', 'green', 'amber'][c.index % 3]!],
  [/unit/, () => 'celsius'],
  [/status|state/, (c) => ['active', 'pending', 'done'][c.index % 3]!],
  [/date|day|when/, (c) => FORMATS.date!(c.index)],
  [/time/, (c) => FORMATS['date-time']!(c.index)],
  [/(^|_)id$|identifier|sku|code/, (c) => `id_${String(1001 + c.index)}`],
  [/title|headline|subject|topic|label|category|tag|keyword/, (c) => `${titleCase(c.name!)} ${c.index + 1}`],
  [/answer|summary|description|text|content|body|message|reason|explanation|comment|note|response|result|details/, (c) => c.prose],
];

/** Number guesses by property name, before the bounds are applied. */
const NUMBER_HINTS: Array<[RegExp, number]> = [
  [/age/, 36],
  [/year/, 2025],
  [/month/, 6],
  [/price|cost|amount|total|balance|salary|usd|eur/, 19.99],
  [/lat(itude)?$/, 38.72],
  [/lon(gitude)?$|lng$/, -9.14],
  [/temp(erature)?/, 18],
  [/percent|pct|ratio|probability|confidence|likelihood/, 0.85],
  [/rating|score|stars/, 4],
  [/days?$|nights?$/, 3],
  [/hours?$/, 2],
  [/minutes?$|mins?$/, 30],
  [/count|quantity|qty|number|num|size|limit|max|items?$|people|guests|adults|children/, 3],
  [/(^|_)id$/, 1001],
];

export function stringFor(schema: Schema, context: ValueContext): string {
  const name = (context.name ?? '').toLowerCase();
  let value: string | undefined;
  if (typeof schema.pattern === 'string') value = samplePattern(schema.pattern);
  const format = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined;
  if (value === undefined && format) value = format(context.index);
  if (value === undefined) value = TEXT_HINTS.find(([test]) => test.test(name))?.[1](context);
  if (value === undefined) value = name ? `${humanName(name)} ${context.index + 1}` : context.index === 0 ? 'example' : `example ${context.index + 1}`;
  return fitLength(value, schema);
}

/** The longest string the simulator writes for one value. */
const MAX_STRING = 4096;

/** A whole string is shortened or padded only when the schema insists; formats and patterns stay as they are. */
function fitLength(value: string, schema: Schema): string {
  // A client's minLength is honoured up to MAX_STRING: the demo's process builds the string.
  const min = Math.min(MAX_STRING, typeof schema.minLength === 'number' ? schema.minLength : 0);
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  let out = value;
  if ([...out].length > max) out = [...out].slice(0, max).join('');
  while ([...out].length < min) out += out.length === 0 ? 'x' : out;
  return [...out].slice(0, Math.max(min, Math.min(max, [...out].length))).join('');
}

export function numberFor(schema: Schema, integer: boolean, context: ValueContext): number {
  const name = (context.name ?? '').toLowerCase();
  const guess = NUMBER_HINTS.find(([test]) => test.test(name))?.[1];
  const { low, high } = bounds(schema, integer);
  let value = guess ?? (Number.isFinite(low) && Number.isFinite(high) ? (low + high) / 2 : Number.isFinite(low) ? low + 1 : Number.isFinite(high) ? high - 1 : 42);
  value += context.index * (integer ? 1 : 0.5); // array items differ
  if (integer) value = Math.round(value);
  value = Math.min(high, Math.max(low, value));
  const step = typeof schema.multipleOf === 'number' && schema.multipleOf > 0 ? schema.multipleOf : integer ? 1 : undefined;
  if (step !== undefined) value = onStep(value, step, low, high);
  return value;
}

/**
 * The multiple of `step` nearest `value` within the bounds — one whose division by `step` is whole
 * in floating point too, as validators check it (19.99 / 0.01 is 1998.9999999999998; 20.49 passes).
 */
function onStep(value: number, step: number, low: number, high: number): number {
  const nearest = Math.round(value / step);
  for (let offset = 0; offset < 50; offset++) {
    for (const steps of [nearest + offset, nearest - offset]) {
      const candidate = tidy(steps * step, step);
      if (candidate >= low && candidate <= high && Number.isInteger(candidate / step)) return candidate;
    }
  }
  return tidy(Math.min(Math.floor(high / step), Math.max(Math.ceil(low / step), nearest)) * step, step);
}

/** Inclusive bounds, exclusive ones moved inward (by one for integers, by a sliver of the range for numbers). */
function bounds(schema: Schema, integer: boolean): { low: number; high: number } {
  let low = typeof schema.minimum === 'number' ? schema.minimum : -Infinity;
  let high = typeof schema.maximum === 'number' ? schema.maximum : Infinity;
  // Draft 2020 spells exclusive bounds as numbers; draft 4 as booleans beside minimum/maximum.
  const exclusiveLow = typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum : schema.exclusiveMinimum === true ? low : undefined;
  const exclusiveHigh = typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum : schema.exclusiveMaximum === true ? high : undefined;
  const span = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) ? Math.min(1, (b - a) / 4) : 1);
  if (exclusiveLow !== undefined) low = Math.max(low, integer ? Math.floor(exclusiveLow) + 1 : exclusiveLow + span(exclusiveLow, exclusiveHigh ?? high));
  if (exclusiveHigh !== undefined) high = Math.min(high, integer ? Math.ceil(exclusiveHigh) - 1 : exclusiveHigh - span(exclusiveLow ?? low, exclusiveHigh));
  if (integer) {
    low = Math.ceil(low);
    high = Math.floor(high);
  }
  return { low, high };
}

/** 0.1 * 3 is 0.30000000000000004: round to the step's own decimals. */
function tidy(value: number, step: number): number {
  const decimals = (String(step).split('.')[1] ?? '').length;
  return Number(value.toFixed(Math.min(decimals, 20)));
}

/** A capitalised word of the prompt that does not start it ("Weather in Oslo?" → Oslo). */
function properNoun(prompt: string, index: number): string | undefined {
  const words = [...prompt.matchAll(/(?<![.!?]\s|^)\b(\p{Lu}[\p{L}'-]+(?:\s\p{Lu}[\p{L}'-]+)*)/gu)].map((match) => match[1]!).filter((word) => !/^(I|JSON|API)$/.test(word));
  return words.length > 0 ? words[index % words.length] : undefined;
}

function humanName(name: string): string {
  return name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ').trim().toLowerCase();
}

function titleCase(name: string): string {
  const words = humanName(name);
  return words.charAt(0).toUpperCase() + words.slice(1);
}
