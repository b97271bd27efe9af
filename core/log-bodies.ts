// Request and response bodies on a log line (MODELGATE_LOG_REQUESTS / _RESPONSES) are masked
// (secrets) and anonymized without holding the event loop: the strings are treated a slice at a
// time, and the work yields to other requests whenever it has run for SLICE_MS. A 100 KB body took
// 2–6 ms in one block on the logger's hook (bench/log-body.ts); this way no block is longer than
// about a millisecond. A string is cut only at a line break, tab or bracket, characters no key,
// e-mail address or phone number contains, so nothing a pattern looks for is split in two; a long
// string without any is treated whole.
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Characters of text treated between two looks at the clock. */
const SLICE = 8192;
const SLICE_MS = 1;
const MAX_DEPTH = 64;
const BOUNDARY = /[\n\r\t<>{}[\]|;]/g;

interface Clock {
  since: number;
}

/** The pieces of `text` to treat one by one: cut at a boundary character after SLICE characters, or whole. */
export function slices(text: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (text.length - start > SLICE) {
    BOUNDARY.lastIndex = start + SLICE;
    const found = BOUNDARY.exec(text);
    if (!found) break;
    pieces.push(text.slice(start, found.index + 1));
    start = found.index + 1;
  }
  pieces.push(text.slice(start));
  return pieces;
}

/** `value` with `transform` applied to every string (copied where something changed), yielding every SLICE_MS. */
export async function transformStrings(value: unknown, transform: (text: string) => string, clock: Clock = { since: performance.now() }, depth = 0): Promise<unknown> {
  if (typeof value === 'string') {
    let out = '';
    for (const piece of slices(value)) {
      out += transform(piece);
      if (performance.now() - clock.since > SLICE_MS) {
        await nextTurn();
        clock.since = performance.now();
      }
    }
    return out;
  }
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_DEPTH) return '[too deep]';
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = await transformStrings(value[i], transform, clock, depth + 1);
      if (item !== value[i]) (copy ??= [...value])[i] = item;
    }
    return copy ?? value;
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  let copy: Record<string, unknown> | undefined;
  const record = value as Record<string, unknown>;
  for (const name of Object.keys(record)) {
    const item = await transformStrings(record[name], transform, clock, depth + 1);
    if (item !== record[name]) (copy ??= { ...record })[name] = item;
  }
  return copy ?? value;
}
