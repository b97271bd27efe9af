// Anonymization of what the gateway keeps about a request — stored request records, logged bodies,
// error messages kept for reports — never of what it forwards (unless an operator opts in). Named
// fields (the OpenAI `user` and `safety_identifier`, and every object key listed in
// MODELGATE_ANONYMIZATION_FIELDS, however deep: `metadata.user_id`; their strings and numbers, not
// objects under them) and e-mail addresses and phone
// numbers found in any text are replaced by a keyed pseudonym, `anon_` + 16 hex digits of
// HMAC-SHA256(key, value). The same value always gives the same pseudonym under one key, so
// records and reports still group by user without saying who; without the key a pseudonym cannot
// be reversed or recomputed from a guessed address.
import { createHmac } from 'node:crypto';
import { mapStrings, type Kept } from './string-walk.js';

/** Field names anonymized when MODELGATE_ANONYMIZATION_FIELDS is empty (the spec's usual ones). */
export const DEFAULT_FIELDS = ['user_id', 'email', 'phone'] as const;
/** The OpenAI request fields that identify an end user: always anonymized. */
const USER_FIELDS = ['user', 'safety_identifier'];
/** Pseudonyms remembered (values up to RECENT_VALUE characters). */
const RECENT = 4096;
const RECENT_VALUE = 256;
/** Objects nested deeper than this are kept out (replaced by a marker), not walked. */
const MAX_DEPTH = 64;

// Each pattern starts only where a run of its characters starts (the lookbehinds): tried from
// inside a long run, it would rescan the rest of it (quadratic on a 20 MB body).
const EMAIL = /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![A-Za-z0-9-])/g;
// International (+44 20 7946 0958), grouped (555-123-4567, (555) 123 4567, 555.123.4567) or a bare
// run of 10 to 15 digits; not a group of a longer hyphenated token (a UUID's digits-only group).
// Checked further in isPhone() below.
const PHONE = /(?<![\w+])(?<!\w-)(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,5}(?:[ .-]?\d{2,5}){1,5}(?![\w])(?!-\w)/g;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
// Versions and IPv4 addresses (1.2.3, 192.168.10.20): short groups joined by dots.
const VERSION_LIKE = /^\d{1,3}(?:\.\d{1,3}){1,3}$/;

export interface AnonymizerOptions {
  enabled: boolean;
  /** Object keys whose values are anonymized wherever they occur; empty: DEFAULT_FIELDS. */
  fields: readonly string[];
  /** The HMAC key (32 bytes). Stable across restarts and replicas, or pseudonyms change. */
  key: Buffer;
}

/** What `pseudonym` makes: left as it is when met again (a body anonymized before forwarding, then recorded). */
const PSEUDONYM = /^anon_[0-9a-f]{16}$/;
const WHOLE_EMAIL = new RegExp(`^${EMAIL.source.replace('(?<![A-Za-z0-9._%+-])', '')}$`);
/** Work done between two looks at the clock by the yielding variants, in ms. */
const SLICE_MS = 1;

/** When the yielding variants last let other work run. */
export interface Clock {
  since: number;
}

export class Anonymizer {
  readonly enabled: boolean;
  private readonly fields: Set<string>;
  private readonly key: Buffer;
  /** Pseudonyms computed lately, by value. */
  private readonly recent = new Map<string, string>();

  constructor(options: AnonymizerOptions) {
    this.enabled = options.enabled;
    const named = options.fields.length > 0 ? options.fields : DEFAULT_FIELDS;
    this.fields = new Set([...USER_FIELDS, ...named].map((field) => field.toLowerCase()));
    this.key = options.key;
  }

  /** `anon_` + 16 hex digits of HMAC-SHA256(key, value): the same value, the same pseudonym; a pseudonym stays as it is. */
  pseudonym(value: string): string {
    if (PSEUDONYM.test(value)) return value;
    let pseudonym = this.recent.get(value);
    if (pseudonym === undefined) {
      pseudonym = `anon_${createHmac('sha256', this.key).update(value).digest('hex').slice(0, 16)}`;
      // The same addresses recur within a conversation and across its turns: an HMAC each time was
      // most of the cost of a long body. Bounded: cleared when full.
      if (this.recent.size >= RECENT && value.length <= RECENT_VALUE) this.recent.clear();
      if (value.length <= RECENT_VALUE) this.recent.set(value, pseudonym);
    }
    return pseudonym;
  }

  /** `text` with its e-mail addresses and phone numbers replaced by pseudonyms; as is when disabled. */
  text(text: string): string {
    if (!this.enabled) return text;
    let out = text;
    if (out.includes('@')) out = out.replace(EMAIL, this.email);
    if (/\d{2}/.test(out)) out = out.replace(PHONE, this.phone);
    return out;
  }

  /** `text` as `text()` gives it, letting other work run every millisecond or so (a 20 MB body takes a second). */
  async textYielding(text: string, clock: Clock = { since: performance.now() }): Promise<string> {
    if (!this.enabled) return text;
    let out = text;
    if (out.includes('@')) out = await replaceYielding(out, EMAIL, this.email, clock);
    if (/\d{2}/.test(out)) out = await replaceYielding(out, PHONE, this.phone, clock);
    return out;
  }

  private readonly email = (email: string): string => this.pseudonym(email.toLowerCase());

  private readonly phone = (match: string): string => {
    if (isPhone(match)) return this.pseudonym(phoneDigits(match));
    // More digits than one number has, in groups: numbers side by side (`555 123 4567 555 987
    // 6543`, a date then a number). Replaced whole: no part of either is left.
    if (match.replace(/\D/g, '').length > 15 && /\d[ .()-]+\+?\d/.test(match)) return this.pseudonym(phoneDigits(match));
    return match;
  };

  /**
   * `value` (a request or response body, a log line's object) with named fields pseudonymized and
   * every string's e-mail addresses and phone numbers replaced: copied where something changed,
   * `value` itself (not changed) when nothing did or when disabled. Plain objects and arrays are
   * walked; other objects (errors, buffers) are kept as they are.
   */
  value(value: unknown, kept?: Kept): unknown {
    return this.enabled ? this.walk(value, 0, false, true, kept) : value;
  }

  /** `value` as `value()` gives it, letting other work run every millisecond or so. */
  async valueYielding(value: unknown, clock: Clock = { since: performance.now() }, kept?: Kept): Promise<unknown> {
    if (!this.enabled) return value;
    return mapStrings(this.walk(value, 0, false, false, kept), (text) => this.textYielding(text, clock), kept);
  }

  /** `value` with only its named fields pseudonymized (text as is): the cheap half of `value`, for callers that treat text on their own. */
  namedFields(value: unknown): unknown {
    return this.enabled ? this.walk(value, 0, false, false) : value;
  }

  /** The pseudonym of a named field's value: an address or a number as text gives it, so both agree. */
  private named(value: string): string {
    const trimmed = value.trim();
    if (WHOLE_EMAIL.test(trimmed)) return this.pseudonym(trimmed.toLowerCase());
    PHONE.lastIndex = 0;
    const match = PHONE.exec(trimmed);
    PHONE.lastIndex = 0;
    if (match && match[0] === trimmed && isPhone(trimmed)) return this.pseudonym(phoneDigits(trimmed));
    return this.pseudonym(value);
  }

  /**
   * `named`: the value of a named field. Its strings and numbers are replaced, and those of an
   * array it holds; an object under it is walked as any other (a tool's JSON Schema has a property
   * named `email` whose `type` and `description` are not the user's address).
   */
  private walk(value: unknown, depth: number, named: boolean, text: boolean, kept?: Kept, seen = new Set<object>()): unknown {
    if (typeof value === 'string') return named ? this.named(value) : text ? this.text(value) : value;
    if (typeof value === 'number' || typeof value === 'bigint') return named ? this.named(String(value)) : value;
    if (typeof value !== 'object' || value === null) return value;
    if (depth >= MAX_DEPTH) return '[too deep]';
    // A log line's object may hold a cycle: walked once, not 2^64 times.
    if (seen.has(value)) return '[circular]';
    if (Array.isArray(value)) {
      seen.add(value);
      let copy: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const item = this.walk(value[i], depth + 1, named, text, kept, seen);
        if (item !== value[i]) (copy ??= [...value])[i] = item;
      }
      seen.delete(value);
      return copy ?? value;
    }
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) return value;
    seen.add(value);
    let copy: Record<string, unknown> | undefined;
    const record = value as Record<string, unknown>;
    for (const name of Object.keys(record)) {
      if (kept?.(name, depth)) continue;
      const item = this.walk(record[name], depth + 1, this.fields.has(name.toLowerCase()), text, kept, seen);
      if (item !== record[name]) (copy ??= { ...record })[name] = item;
    }
    seen.delete(value);
    return copy ?? value;
  }
}

/** `text.replace(pattern, replace)`, letting other work run whenever SLICE_MS have passed since `clock`. */
async function replaceYielding(text: string, pattern: RegExp, replace: (match: string) => string, clock: Clock): Promise<string> {
  // A copy: its lastIndex is this call's alone while others run between the turns.
  const search = new RegExp(pattern.source, pattern.flags);
  let out = '';
  let from = 0;
  for (let match = search.exec(text); match !== null; match = search.exec(text)) {
    out += text.slice(from, match.index) + replace(match[0]);
    from = match.index + match[0].length;
    if (performance.now() - clock.since > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      clock.since = performance.now();
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

/** A match of PHONE that is a phone number: 7 to 15 digits, not a date or a version, and shaped like one. */
function isPhone(match: string): boolean {
  const digits = match.replace(/\D/g, '').length;
  if (digits < 7 || digits > 15) return false;
  if (ISO_DATE.test(match) || VERSION_LIKE.test(match)) return false;
  // A bare run of digits counts from 10 (a national number with its area code); shorter ones are
  // more often counts and ids than phone numbers.
  if (/^\d+$/.test(match)) return digits >= 10;
  return true;
}

/** The number as dialled: its digits, with the `+` of an international one. */
function phoneDigits(match: string): string {
  return (match.trim().startsWith('+') ? '+' : '') + match.replace(/\D/g, '');
}
