// How deeply a client's JSON nests, measured without recursion. Several steps after parsing walk
// the body recursively (JSON.stringify for token estimates and upstream requests, the cache key,
// schema translators, the logger's serializer); ten thousand levels of `[` overflowed their stacks
// and answered 500. The body is measured once, right after parsing, so every later walk may
// assume a bounded depth. Depth counts containers: the body object is level 1, `{"metadata":[]}`'s
// array is level 2.

/** A path into a JSON value: object keys and array indexes, outermost first. */
export type JsonPath = ReadonlyArray<string | number>;

interface Link {
  segment: string | number;
  parent: Link | undefined;
}

/**
 * The path of the first container nested deeper than `limit` (depth-first, in document order), or
 * undefined when the whole value is within it. An explicit stack: memory grows with the body's
 * size, never the call stack with its depth.
 */
export function tooDeepPath(value: unknown, limit: number): JsonPath | undefined {
  if (!isContainer(value)) return undefined;
  const stack: Array<{ value: object; depth: number; link: Link | undefined }> = [{ value, depth: 1, link: undefined }];
  while (stack.length > 0) {
    const { value: container, depth, link } = stack.pop()!;
    if (depth > limit) return unwind(link);
    // Pushed in reverse so the first child is looked at first: the path found is the first in the text.
    if (Array.isArray(container)) {
      for (let i = container.length - 1; i >= 0; i--) {
        const child: unknown = container[i];
        if (isContainer(child)) stack.push({ value: child, depth: depth + 1, link: { segment: i, parent: link } });
      }
    } else {
      const record = container as Record<string, unknown>;
      const keys = Object.keys(record);
      for (let i = keys.length - 1; i >= 0; i--) {
        const child = record[keys[i]!];
        if (isContainer(child)) stack.push({ value: child, depth: depth + 1, link: { segment: keys[i]!, parent: link } });
      }
    }
  }
  return undefined;
}

/**
 * Whether JSON text nests deeper than `limit`, counting brackets outside strings: for JSON that
 * arrives inside a string (a tool call's `arguments`) and is parsed later by an adapter. Text that
 * is not JSON is measured all the same; its parser refuses it afterwards.
 */
export function textTooDeep(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === BACKSLASH) i++;
      else if (char === QUOTE) inString = false;
    } else if (char === QUOTE) inString = true;
    else if (char === OPEN_BRACKET || char === OPEN_BRACE) {
      if (++depth > limit) return true;
    } else if (char === CLOSE_BRACKET || char === CLOSE_BRACE) depth--;
  }
  return false;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

function isContainer(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

function unwind(link: Link | undefined): JsonPath {
  const path: Array<string | number> = [];
  for (let at = link; at; at = at.parent) path.push(at.segment);
  return path.reverse();
}
