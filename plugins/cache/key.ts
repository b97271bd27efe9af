// The cache key: a hash of the tenant and everything in the request that can change the answer.
// `stream` and `stream_options` are left out, so a streamed answer serves a non-stream request and
// the other way round. Object keys are sorted and null fields dropped (null means "unset" in the
// OpenAI API), so the same request written differently still matches. Per-request overrides (the
// body's `modelgate` object and x-modelgate-* headers) are part of it because they can change which
// model answers `auto`; the cache's own switch is not.
import { createHash } from 'node:crypto';
import type { RequestContext } from '../../core/context.js';

/** Every cache key starts with this (after REDIS_KEY_PREFIX); the version changes with the stored format. */
export const KEY_SPACE = 'cache:';
const VERSION = 'v1:';

const TRANSPORT_FIELDS = new Set(['stream', 'stream_options']);

export function cacheKey(ctx: RequestContext): string {
  const chat = ctx.chat!;
  const request: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(chat.body)) if (!TRANSPORT_FIELDS.has(name)) request[name] = value;
  const overrides: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(chat.overrides)) if (name !== 'cache') overrides[name] = value;
  const canonical = canonicalJson({ tenant: ctx.principal?.tenant ?? '', request, overrides });
  return `${KEY_SPACE}${VERSION}${createHash('sha256').update(canonical).digest('base64url')}`;
}

/** JSON with object keys sorted and null or undefined object fields left out. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const record = value as Record<string, unknown>;
  const fields: string[] = [];
  for (const name of Object.keys(record).sort()) {
    const field = record[name];
    if (field === null || field === undefined) continue;
    fields.push(`${JSON.stringify(name)}:${canonicalJson(field)}`);
  }
  return `{${fields.join(',')}}`;
}
