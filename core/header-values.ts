// Header values as Node can write them. Apart from core/respond.ts so that the SSE writer
// (core/sse.ts) can use it without importing the request context.
import type { OutgoingHttpHeaders } from 'node:http';

/** Printable ASCII (and tab): what every HTTP client reads the same way. */
const PLAIN = /^[\t\x20-\x7e]*$/;

/**
 * A header value as it can be written: printable ASCII as is; anything else — a model id such as
 * `custom/模型`, control characters — percent-encoded as UTF-8 (as encodeURIComponent does).
 * Node refuses values outside Latin-1 or with control characters (writeHead throws), and that
 * would happen after the upstream was called and billed.
 */
export function headerValue(value: string): string {
  return PLAIN.test(value) ? value : encodeURIComponent(value);
}

/** Every string value made writable (see headerValue); numbers and lists as well. */
export function writableHeaders(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  // Almost always every value is plain already: check first, copy only when one is not.
  let plain = true;
  for (const name in headers) {
    const value = headers[name];
    if (typeof value === 'string' ? !PLAIN.test(value) : Array.isArray(value) || value === undefined) {
      plain = false;
      break;
    }
  }
  if (plain) return headers;
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = typeof value === 'string' ? headerValue(value) : Array.isArray(value) ? value.map(headerValue) : value;
  }
  return out;
}
