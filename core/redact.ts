// Masks credentials in text the gateway did not write itself — a provider's error message, a
// library's error, a logged request body — before it reaches a client, the status endpoint or a
// log line. Two kinds are masked: the gateway's own configured secrets (every setting declared
// `secret: true`), whole or quoted in part, and anything shaped like a key or token.
//
// The configured secrets are held here, for the process, rather than passed down: UpstreamError
// is built deep inside adapters that are pure functions of the provider's answer, and a secret
// list threaded through every one of them would be a parameter each new error path could forget.
import type { SettingsSchema } from './settings.js';

export const REDACTED = '[REDACTED]';

/**
 * Providers quote a key in part: its first characters, or both ends around asterisks
 * (`sk-proj-****abcd`). Any run of this many characters taken from a secret counts as the secret;
 * shorter runs would match ordinary words.
 */
const FRAGMENT = 8;
/** Secrets shorter than this are not searched for at all: they would mask ordinary words. */
const SHORTEST = 6;
/** What a quoted key is made of, with the asterisks and dots of a shortened one: a match grows over these. */
const KEY_CHAR = /[A-Za-z0-9_\-*.]/;

/** Secrets found only whole: those shorter than a fragment, and whole URLs (their parts are below). */
const whole = new Set<string>();
/** Every FRAGMENT-long run of every other secret. */
const fragments = new Set<string>();

/** Adds the values of every setting declared `secret: true` to what is masked from now on. */
export function rememberSecrets(schemas: readonly SettingsSchema[], values: Readonly<Record<string, unknown>>): void {
  for (const schema of schemas) {
    for (const [name, spec] of Object.entries(schema)) {
      if (!spec.secret) continue;
      const { exactly, inPart } = secretParts(values[name]);
      for (const secret of exactly) if (secret.length >= SHORTEST) whole.add(secret);
      for (const secret of inPart) remember(secret);
    }
  }
}

function remember(secret: string): void {
  if (secret.length < SHORTEST) return;
  if (secret.length < FRAGMENT) whole.add(secret);
  for (let i = 0; i + FRAGMENT <= secret.length; i++) fragments.add(secret.slice(i, i + FRAGMENT));
}

interface SecretParts {
  /** Searched for only as they are. */
  exactly: string[];
  /** Searched for whole and in part. */
  inPart: string[];
}

/**
 * The strings of a secret setting worth searching for. A URL's secret is its password and its long
 * path or query parts (a webhook's token), not its host or database name, which would mask the
 * words they are made of; the whole URL is searched for only as it is. A header value's secret is
 * its last word (`Bearer <token>`): the scheme is not.
 */
function secretParts(value: unknown): SecretParts {
  if (typeof value === 'string') {
    if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return { exactly: [], inPart: [value] };
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return { exactly: [], inPart: [value] };
    }
    const inPart = [url.password, decodeSafely(url.password)];
    for (const segment of url.pathname.split('/')) if (segment.length >= 16) inPart.push(segment);
    for (const query of url.searchParams.values()) if (query.length >= 16) inPart.push(query);
    return { exactly: [value], inPart: inPart.filter((part) => part.length > 0) };
  }
  const parts: SecretParts = { exactly: [], inPart: [] };
  const items = Array.isArray(value) ? value : typeof value === 'object' && value !== null ? Object.values(value) : [];
  for (const item of items) {
    if (typeof item === 'string' && /\s/.test(item.trim())) {
      parts.exactly.push(item);
      parts.inPart.push(item.trim().split(/\s+/).at(-1)!);
      continue;
    }
    const inner = secretParts(item);
    parts.exactly.push(...inner.exactly);
    parts.inPart.push(...inner.inPart);
  }
  return parts;
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * Key- and token-shaped text, whoever it belongs to. Each keeps what names the thing (`Bearer `,
 * `key=`, the `sk-` prefix) so the message still says what was refused.
 */
const PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  // Every pattern that opens with a run of key characters starts only where such a run starts (the
  // lookbehinds): tried from inside a long run, each would rescan the rest of it, quadratic time
  // on a client's 16 KB path or 20 MB body.
  // JSON Web Tokens: a base64url JSON header, payload and signature.
  [/(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g, REDACTED],
  [/\b(Bearer\s+)[A-Za-z0-9._~+/=*-]{6,}/gi, `$1${REDACTED}`],
  // Credentials echoed with the header or field that carried them.
  [/\b((?:x-goog-api-key|x-api-key|api-key|authorization|openai-organization|openai-project|x-goog-user-project)["']?\s*[:=]\s*["']?)(?!Bearer\b)[^\s"',;)]{4,}/gi, `$1${REDACTED}`],
  // Query and form parameters that carry keys (Gemini's `?key=`).
  [/\b((?:api[_-]?key|key|access_token|token|secret|password|signature|sig)=)[^&#\s"'),<>]+/gi, `$1${REDACTED}`],
  // Gateway keys (uc_), OpenAI and Anthropic keys (sk-…), Stripe-style (sk_), Google keys (AIza…);
  // asterisks included, for the shortened form providers quote.
  [/\b(uc_|sk-|sk_|AIza)[A-Za-z0-9_\-*]{4,}/g, `$1${REDACTED}`],
  // A key shortened with asterisks (`abcd****wxyz`): its ends are still part of a secret.
  [/(?<![A-Za-z0-9_-])[A-Za-z0-9_-]+\*{3,}[A-Za-z0-9_-]*|(?<!\*)\*{3,}[A-Za-z0-9_-]+/g, REDACTED],
  // OpenAI organization and project ids.
  [/\b(org-|proj_)[A-Za-z0-9]{12,}/g, `$1${REDACTED}`],
  // A long random-looking token in quotes (hex, base64): too long to be a word or a model name.
  [/(["'`])[A-Za-z0-9+/_]{32,}={0,2}\1/g, `$1${REDACTED}$1`],
];

/** `text` with configured secrets, whole or in part, and key-shaped strings masked. */
export function redactText(text: string): string {
  let masked = maskSecrets(text);
  for (const [pattern, replacement] of PATTERNS) masked = masked.replace(pattern, replacement);
  return masked;
}

/** Marks where a configured secret (whole, or a fragment of one) occurs, widens each mark to the whole token, masks it. */
function maskSecrets(text: string): string {
  if ((whole.size === 0 && fragments.size === 0) || text.length < SHORTEST) return text;
  const hit = new Uint8Array(text.length);
  let found = false;
  for (let i = 0; i + FRAGMENT <= text.length; i++) {
    if (fragments.has(text.slice(i, i + FRAGMENT))) {
      hit.fill(1, i, i + FRAGMENT);
      found = true;
    }
  }
  for (const secret of whole) {
    for (let at = text.indexOf(secret); at !== -1; at = text.indexOf(secret, at + 1)) {
      hit.fill(1, at, at + secret.length);
      found = true;
    }
  }
  if (!found) return text;
  // Each mark grows over the rest of the quoted key (`****abcd`, `...`); a sentence's closing dot stays.
  const ranges: Array<[number, number]> = [];
  for (let i = 0; i < text.length; ) {
    if (!hit[i]) {
      i++;
      continue;
    }
    const floor = ranges.at(-1)?.[1] ?? 0;
    let start = i;
    while (start > floor && KEY_CHAR.test(text[start - 1]!)) start--;
    let end = i;
    while (end < text.length && (hit[end] || KEY_CHAR.test(text[end]!))) end++;
    while (end > i + 1 && text[end - 1] === '.' && !hit[end - 1]) end--;
    ranges.push([start, end]);
    i = end;
  }
  let out = '';
  let from = 0;
  for (const [start, end] of ranges) {
    out += text.slice(from, start) + REDACTED;
    from = end;
  }
  return out + text.slice(from);
}

/**
 * A copy of a logged value with every string in it masked, however deep (a failure list's
 * `detail[].message`, a logged request body's messages); the value itself when nothing changed.
 * Only plain objects and arrays are walked: errors have their own serializer.
 */
export function redactDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactText(value);
  if (depth > 12 || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const masked = redactDeep(value[i], depth + 1);
      if (masked !== value[i]) (copy ??= [...value])[i] = masked;
    }
    return copy ?? value;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  let copy: Record<string, unknown> | undefined;
  const record = value as Record<string, unknown>;
  for (const name in record) {
    const masked = redactDeep(record[name], depth + 1);
    if (masked !== record[name]) (copy ??= { ...record })[name] = masked;
  }
  return copy ?? value;
}
