// The cache key: a hash of the tenant, the key's allowed models if it is restricted, the experiment
// arm the request was assigned, and everything in the request that can change the answer.
// `stream` and `stream_options` are left out, so a streamed answer serves a non-stream request and
// the other way round. Object keys are sorted and null fields dropped (null means "unset" in the
// OpenAI API), so the same request written differently still matches. Per-request overrides (the
// body's `modelgate` object and x-modelgate-* headers) are part of it because they can change which
// model answers `auto`; the cache's own switch is not.
import { hash } from 'node:crypto';
import type { RequestContext } from '../../core/context.js';

/** Every cache key starts with this (after REDIS_KEY_PREFIX); the version changes with the stored format. */
export const KEY_SPACE = 'cache:';
const VERSION = 'v1:';

const TRANSPORT_FIELDS = new Set(['stream', 'stream_options']);

/** Fields of a Responses request that do not change the answer (metadata is echoed from the request, not cached). */
const RESPONSES_TRANSPORT_FIELDS = new Set(['stream', 'stream_options', 'store', 'metadata', 'previous_response_id']);

export function cacheKey(ctx: RequestContext): string {
  const chat = ctx.chat!;
  const request: Record<string, unknown> = {};
  // A Responses request as the client wrote it (OpenAI's own endpoint reads fields chat has not), with the turns it continues.
  const responses = chat.responses;
  const source: Record<string, unknown> = responses ? { ...responses.request, history: responses.history } : chat.body;
  const transport = responses ? RESPONSES_TRANSPORT_FIELDS : TRANSPORT_FIELDS;
  for (const [name, value] of Object.entries(source)) if (!transport.has(name)) request[name] = value;
  if (chat.api !== 'chat') request['modelgate:api'] = chat.api;
  const overrides: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(chat.overrides)) if (name !== 'cache') overrides[name] = value;
  // A key restricted to some models never shares answers with keys allowed others: a cached answer
  // of a model outside its set would be served before the router could refuse it.
  const allowed = ctx.principal?.allowedModels ? [...ctx.principal.allowedModels].sort() : undefined;
  // An arm's answers are its own: never served to another arm (nor to traffic outside the experiment).
  const experiment = ctx.experiment && `${ctx.experiment.experimentId}/${ctx.experiment.arm}`;
  const canonical = canonicalJson({ tenant: ctx.principal?.tenant ?? '', allowed, experiment, request, overrides });
  return `${KEY_SPACE}${VERSION}${hash('sha256', canonical, 'base64url')}`;
}

/** Below this depth canonicalJson recurses (no allocation per value); deeper subtrees are walked iteratively. */
const RECURSION_LIMIT = 256;

/**
 * JSON with object keys sorted and null or undefined object fields left out. Recursive for the
 * first RECURSION_LIMIT levels, where every real request lives; a deeper subtree (the body's depth
 * is bounded where it is parsed, but a key must never be what overflows the call stack) is written
 * by the iterative walk.
 */
export function canonicalJson(value: unknown): string {
  return write(value, 0);
}

function write(value: unknown, depth: number): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (depth >= RECURSION_LIMIT) return canonicalJsonIterative(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + write(value[i], depth + 1);
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const names = sortedKeys(record);
  let out = '{';
  let first = true;
  for (const name of names) {
    const field = record[name];
    if (field === null || field === undefined) continue;
    out += `${first ? '' : ','}${JSON.stringify(name)}:${write(field, depth + 1)}`;
    first = false;
  }
  return `${out}}`;
}

/**
 * Object.keys in the order Array.prototype.sort gives strings (UTF-16 code units). Request objects
 * have a handful of keys: an insertion sort in place, where V8's sort allocates a work array per
 * call (~3 KB per request in an allocation profile of the gateway).
 */
function sortedKeys(record: Record<string, unknown>): string[] {
  const names = Object.keys(record);
  if (names.length > 16) return names.sort();
  for (let i = 1; i < names.length; i++) {
    const name = names[i]!;
    let j = i - 1;
    for (; j >= 0 && names[j]! > name; j--) names[j + 1] = names[j]!;
    names[j + 1] = name;
  }
  return names;
}

/** canonicalJson with an explicit stack of what is still to write: any depth. */
function canonicalJsonIterative(value: unknown): string {
  const out: string[] = [];
  // Either text to write as is, or a value to write canonically; popped from the end.
  const todo: Array<{ text: string } | { value: unknown }> = [{ value }];
  while (todo.length > 0) {
    const next = todo.pop()!;
    if ('text' in next) {
      out.push(next.text);
      continue;
    }
    const current = next.value;
    if (current === null || typeof current !== 'object') {
      out.push(JSON.stringify(current) ?? 'null');
    } else if (Array.isArray(current)) {
      todo.push({ text: ']' });
      for (let i = current.length - 1; i >= 0; i--) {
        todo.push({ value: current[i] });
        if (i > 0) todo.push({ text: ',' });
      }
      todo.push({ text: '[' });
    } else {
      const record = current as Record<string, unknown>;
      const names = Object.keys(record)
        .sort()
        .filter((name) => record[name] !== null && record[name] !== undefined);
      todo.push({ text: '}' });
      for (let i = names.length - 1; i >= 0; i--) {
        todo.push({ value: record[names[i]!] });
        todo.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(names[i])}:` });
      }
      todo.push({ text: '{' });
    }
  }
  return out.join('');
}
