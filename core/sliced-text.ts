// Bodies kept for later — on a log line (MODELGATE_LOG_REQUESTS / _RESPONSES), in a request record —
// are masked (secrets) and anonymized without holding the event loop: the strings are treated a slice at a
// time, and the work yields to other requests whenever it has run for SLICE_MS. A 100 KB body took
// 2–6 ms in one block on the logger's hook (bench/log-body.ts). A string is cut only where no
// pattern of redact.ts or anonymize.ts can span the cut: after a comma or an angle bracket, or at
// the white space between two words (not after `Bearer`, `key` and the like, which a credential
// follows). A slice without such a place is treated whole; strings are bounded before
// (logger.ts: 256 KB each, 1 MB a line), so that is the longest block.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { mapStrings } from './string-walk.js';

/** Characters of text treated between two looks at the clock. */
const SLICE = 8192;
const SLICE_MS = 1;
/** A whole word then white space before another word, or a comma or an angle bracket. */
const BOUNDARY = /(?<![A-Za-z])([A-Za-z]+)[ \t\r\n]+(?=[A-Za-z])|[,<>]/g;
/** Words a credential follows (`Bearer <token>`, `api key: <key>`): never cut after them. */
const INTRODUCER = /(?:bearer|basic|key|token|secret|password|passwd|authorization|organization|project|signature|sig|credentials?)$/i;

interface Clock {
  since: number;
}

/** The pieces of `text` to treat one by one: cut at a boundary character after SLICE characters, or whole. */
export function slices(text: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (text.length - start > SLICE) {
    BOUNDARY.lastIndex = start + SLICE;
    let found = BOUNDARY.exec(text);
    while (found && found[1] !== undefined && INTRODUCER.test(found[1])) found = BOUNDARY.exec(text);
    if (!found) break;
    const end = found.index + found[0].length;
    pieces.push(text.slice(start, end));
    start = end;
  }
  pieces.push(text.slice(start));
  return pieces;
}

/** `value` with `transform` applied to every string a slice at a time (copied where something changed), yielding every SLICE_MS. */
export function transformStrings(value: unknown, transform: (text: string) => string, clock: Clock = { since: performance.now() }): Promise<unknown> {
  return mapStrings(value, async (text) => {
    let out = '';
    for (const piece of slices(text)) {
      out += transform(piece);
      if (performance.now() - clock.since > SLICE_MS) {
        await nextTurn();
        clock.since = performance.now();
      }
    }
    return out;
  });
}
