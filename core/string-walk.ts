// Walks over the strings of a body (plain objects and arrays only, at most MAX_DEPTH deep). Bodies
// kept for later (request records, log lines) are cut to a bound before anything else is done with
// them (clipStrings): what is past the bound is never kept, so it is not worth anonymizing or
// masking either. mapStrings then rewrites each string, possibly with pauses in between.

/** Values nested deeper than this are replaced by a marker, not walked. */
const MAX_DEPTH = 64;
/**
 * `value` with its strings cut so that together they hold at most `budget` characters: what is
 * past the bound is never kept, so it is not anonymized either (a 20 MB body held the event loop
 * 1.5 s when it was anonymized whole, then cut to 1 MB). `perString` bounds each string as well.
 */
export interface Budget {
  /** Characters the strings still to come may keep. */
  left: number;
  /** Characters any one string may keep. */
  perString?: number;
  /** Set once a string was cut. */
  cut?: boolean;
}

export function clipStrings(value: unknown, budget: Budget, depth = 0): unknown {
  if (typeof value === 'string') {
    const room = Math.max(0, Math.min(budget.left, budget.perString ?? budget.left));
    if (value.length <= room) {
      budget.left -= value.length;
      return value;
    }
    budget.left -= room;
    budget.cut = true;
    return `${value.slice(0, room)}…[${value.length - room} characters cut]`;
  }
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => clipStrings(item, budget, depth + 1));
  const copy: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value as Record<string, unknown>)) copy[name] = clipStrings(item, budget, depth + 1);
  return copy;
}


/**
 * `value` with `map` applied to each string (awaited: it may pause), copied where something
 * changed; `value` itself when nothing did. Objects other than plain ones (errors, buffers) are
 * kept as they are.
 */
/** Says which object keys' values a walk leaves as they are (by the key's name and its object's depth, 0 for the top). */
export type Kept = (name: string, depth: number) => boolean;

export async function mapStrings(value: unknown, map: (text: string) => string | Promise<string>, kept?: Kept, depth = 0, seen = new Set<object>()): Promise<unknown> {
  if (typeof value === 'string') return map(value);
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_DEPTH) return '[too deep]';
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    if (seen.has(value)) return '[circular]';
    seen.add(value);
    for (let i = 0; i < value.length; i++) {
      const item = await mapStrings(value[i], map, kept, depth + 1, seen);
      if (item !== value[i]) (copy ??= [...value])[i] = item;
    }
    seen.delete(value);
    return copy ?? value;
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  let copy: Record<string, unknown> | undefined;
  const record = value as Record<string, unknown>;
  for (const name of Object.keys(record)) {
    if (kept?.(name, depth)) continue;
    const item = await mapStrings(record[name], map, kept, depth + 1, seen);
    if (item !== record[name]) (copy ??= { ...record })[name] = item;
  }
  seen.delete(value);
  return copy ?? value;
}
