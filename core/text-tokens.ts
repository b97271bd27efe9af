// Tokens a text may cost, counted in one linear pass without a tokenizer. Providers tokenize with a
// byte-level BPE after splitting text into pieces (words with one leading space or punctuation
// mark, digit groups of at most 3, punctuation runs, whitespace runs), so no piece costs more tokens
// than its UTF-8 bytes. Each weight below is such a bound for its class, made tighter where the
// vocabularies were checked exhaustively against o200k and cl100k (gpt-tokenizer, in
// test/core/tokens.test.ts and test/core/tokens-bound.test.ts):
// - a group of 1-3 ASCII digits is one token (all 1,110 such groups checked);
// - a run of n identical ASCII whitespace characters is at most 1 + n/K tokens (K: space 32, tab 8,
//   newline 8; checked up to n = 512), and of identical ASCII punctuation 1 + n/2;
// - every other character — CJK, combining marks, emoji and their joiners, other whitespace — costs
//   its UTF-8 bytes (2, 3, or 4 for a surrogate pair), the byte-level bound;
// - a space before a punctuation mark (each " !"…" ~" is one token) joins it; the last whitespace
//   before anything else (a digit: "1 2 3") is a piece, a token, of its own; a newline run and the
//   indentation after it are two pieces.
// ASCII letters are not bounded but counted: a run of letters (up to 24), with the space, tab or lone
// mark that leads it (" word", ".method", "(x"), is merged by each vocabulary's ranks as its
// tokenizer merges it (core/letter-bpe.ts) — cl100k takes the run whole, o200k splits it before a
// capital that follows a lowercase letter — and costs the larger count; contractions and marks
// after non-ASCII characters are weighed as each tokenizer may cut them (letterRun). A word one
// token in both vocabularies costs one hash lookup; others are merged (~1-3 µs) and remembered.
// Letters beside a non-ASCII character, the letters of a run with digits or longer than 24 (hex,
// base64, hashes), and words past MERGE_BUDGET letters merged in one request count their bytes.
import { MAX_PIECE, cl100kTokens, o200kTokens, wholeToken } from './letter-bpe.js';

const SPACE_RUN = 32;
const TAB_RUN = 8;
const NEWLINE_RUN = 8;
const PUNCTUATION_RUN = 2;
const LONGEST_IDENTIFIER = 24; // longer runs of letters and digits are hashes or base64: their bytes

const LETTER = 1;
const DIGIT = 2;
const SPACE = 3; // ASCII whitespace
const PUNCT = 4; // printable ASCII punctuation
const CONTROL = 5; // other ASCII: weighed by its bytes, it merges with nothing
const OTHER = 6; // not ASCII

function kind(c: number): number {
  if (c >= 128) return OTHER;
  if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90)) return LETTER;
  if (c >= 48 && c <= 57) return DIGIT;
  if (c === 32 || (c >= 9 && c <= 13)) return SPACE;
  return c > 32 && c < 127 ? PUNCT : CONTROL;
}

const isUpper = (c: number) => c >= 65 && c <= 90;

/** Letters an estimate may still merge (core/letter-bpe.ts); past them, words count their bytes. */
export interface MergeBudget {
  letters: number;
}

/**
 * Letters merged per estimate (one request): random letters cost ~0.25 µs each to merge, so this
 * bounds a request's merging to ~25-50 ms however its text is split into messages and parts.
 */
export const MERGE_BUDGET = 100_000;
// Past it, pieces that are not one token count their bytes, remembered ones too.

/** Bound of the tokens of the first `end` UTF-16 units of `text`, merging at most `budget.letters` letters. */
export function textTokenBound(text: string, end: number, budget: MergeBudget = { letters: MERGE_BUDGET }): number {
  let tokens = 0;
  let i = 0;
  // The run of ASCII letters and digits the scan is in, and whether it is dense: with a digit, or
  // longer than an identifier (hex, base64, hashes), where letters are weighed by their bytes.
  let runEnd = 0;
  let dense = false;
  while (i < end) {
    const c = text.charCodeAt(i);
    const k = kind(c);
    let j = i + 1;
    if ((k === LETTER || k === DIGIT) && i >= runEnd) {
      let hasDigit = false;
      runEnd = i;
      for (let kr = k; runEnd < end && (kr === LETTER || kr === DIGIT); kr = kind(text.charCodeAt(++runEnd))) hasDigit ||= kr === DIGIT;
      dense = hasDigit || runEnd - i > LONGEST_IDENTIFIER;
    }
    if (k === LETTER) {
      while (j < end && kind(text.charCodeAt(j)) === LETTER) j++;
      tokens += dense ? j - i + uncountedLead(text, i) : letterRun(text, i, j, end, budget);
    } else if (k === DIGIT) {
      while (j < end && kind(text.charCodeAt(j)) === DIGIT) j++;
      // Groups of 3 digits; a numeral that is not ASCII ("٠", "ꛯ") before them shifts the groups.
      tokens += Math.ceil((j - i) / 3) + (i > 0 && text.charCodeAt(i - 1) >= 128 ? 1 : 0);
    } else if (k === SPACE) {
      while (j < end && kind(text.charCodeAt(j)) === SPACE) j++;
      tokens += whitespaceRun(text, i, j, end);
    } else if (k === PUNCT) {
      while (j < end && text.charCodeAt(j) === c) j++;
      if (!(j - i === 1 && leadsWord(text, i, end))) tokens += 1 + Math.floor((j - i) / PUNCTUATION_RUN);
    } else if (k === CONTROL) {
      tokens += 1;
    } else {
      tokens += utf8Bytes(text, i, c);
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < end) {
        const low = text.charCodeAt(i + 1);
        if (low >= 0xdc00 && low <= 0xdfff) j++;
      }
    }
    i = j;
  }
  return tokens;
}


/**
 * Whether the lone mark at `m` is the first character of the word after it (".method", "(x",
 * "_id"), as the tokenizers split text: not when it follows another mark or a space, which it
 * joins instead (" (", "(."), nor after a character that is not ASCII (it may be a mark).
 */
function leadsWord(text: string, m: number, end: number): boolean {
  if (m + 1 >= end || kind(text.charCodeAt(m + 1)) !== LETTER) return false;
  if (m === 0) return true;
  const before = text.charCodeAt(m - 1);
  const k = kind(before);
  return k === LETTER || k === DIGIT || (k === SPACE && before !== 32);
}

/**
 * 1 when the character before the letters at `from` is a tab or lone mark the scan left uncounted
 * because it leads the word: it must be counted where the word is weighed by its bytes ("\"q1" is
 * three tokens). A space is not: " " followed by any ASCII letter is a token of both vocabularies,
 * so a space-led run of n letters is at most n tokens.
 */
function uncountedLead(text: string, from: number): number {
  if (from === 0) return 0;
  const before = text.charCodeAt(from - 1);
  return before === 9 || (kind(before) === PUNCT && leadsWord(text, from - 1, from + 1)) ? 1 : 0;
}

const APOSTROPHE = 39;

/** Letters at `from` that the tokenizers' contraction rule takes after an apostrophe ('s 't 're 've 'm 'll 'd, any case): 0, 1 or 2. */
function contraction(text: string, from: number, to: number): number {
  const a = text.charCodeAt(from) | 32;
  if (a === 115 || a === 116 || a === 109 || a === 100) return 1; // s t m d
  if (from + 1 >= to) return 0;
  const b = text.charCodeAt(from + 1) | 32;
  return (a === 114 && b === 101) || (a === 118 && b === 101) || (a === 108 && b === 108) ? 2 : 0; // re ve ll
}

/**
 * The letters [from, to), a run with no letter or digit beside it: what each vocabulary bills for
 * them with the space, tab or mark that leads them, the larger. Where the tokenizers may split the
 * text otherwise than one piece of lead and letters, each way they may is weighed:
 * - beside a character that is not ASCII (maybe a letter of the same word: "spaghettiß"), the
 *   letters count their bytes: BPE can cost more on a whole word than on its parts;
 * - after an apostrophe, cl100k takes a contraction ('s, 't, 're, …) as a piece of its own and o200k
 *   joins it to a word before it ("x'd", "efault"): the parts are weighed as each tokenizer cuts them;
 * - a lone mark after a character that is not ASCII was counted on its own, but leads the word when
 *   that character is a letter ("ʰ(Symfony"): the larger of the two.
 */
function letterRun(text: string, from: number, to: number, end: number, budget: MergeBudget): number {
  const before = from > 0 ? text.charCodeAt(from - 1) : 0;
  const after = to < end ? text.charCodeAt(to) : 0;
  const led = before === 32 || before === 9 || (kind(before) === PUNCT && leadsWord(text, from - 1, end));
  const lead = led ? from - 1 : from;
  if (before >= 128 || after >= 128 || to - lead > MAX_PIECE) return to - from + uncountedLead(text, from);
  // An apostrophe after a character that is not ASCII was counted on its own (1), and may join it.
  const afterOther = !led && before === APOSTROPHE && from >= 2 && text.charCodeAt(from - 2) >= 128;
  if ((led || afterOther) && before === APOSTROPHE) {
    const c = contraction(text, from, to);
    if (c > 0) {
      const rest = from + c < to ? pieceCounts(text, from + c, from + c, to, budget) : 0;
      const joinsWordBefore = afterOther || (from >= 2 && kind(text.charCodeAt(from - 2)) === LETTER);
      // o200k: the contraction is part of the word before it (counted at most its bytes here), or leads these letters.
      const o200k = joinsWordBefore ? 1 + c + o200kOf(rest) : o200kOf(pieceCounts(text, from - 1, from, to, budget));
      const cl100k = cl100kOf(pieceCounts(text, from - 1, from, from + c, budget)) + cl100kOf(rest);
      if (led) return Math.max(o200k, cl100k);
      // The character before may be a mark instead, the apostrophe then its own or this word's lead.
      return Math.max(Math.max(o200k, cl100k) - 1, larger(pieceCounts(text, from, from, to, budget)), larger(pieceCounts(text, from - 1, from, to, budget)) - 1);
    }
  }
  const counts = pieceCounts(text, lead, from, to, budget);
  if (!led && kind(before) === PUNCT && from >= 2 && text.charCodeAt(from - 2) >= 128) {
    const withMark = pieceCounts(text, from - 1, from, to, budget);
    return Math.max(larger(counts), larger(withMark) - 1);
  }
  return larger(counts);
}

const piece = new Uint8Array(MAX_PIECE);

// Both counts of a piece in one number: o200k × 64 + cl100k (a piece has at most 25 characters).
const pack = (o200k: number, cl100k: number) => o200k * 64 + cl100k;
const o200kOf = (counts: number) => counts >> 6;
const cl100kOf = (counts: number) => counts & 63;
const larger = (counts: number) => Math.max(counts >> 6, counts & 63);

/**
 * o200k's and cl100k's tokens for text[lead..to) as one piece: the letters from `from`, after the
 * lead character at `lead` if lead < from. cl100k takes the piece whole; o200k splits it where a
 * lowercase letter is followed by a capital ("fooBar": "foo", "Bar").
 */
function pieceCounts(text: string, lead: number, from: number, to: number, budget: MergeBudget): number {
  const length = to - lead;
  let camel = false;
  for (let i = lead; i < to; i++) {
    const c = text.charCodeAt(i);
    piece[i - lead] = c;
    camel ||= isUpper(c) && i > from && isLower(text.charCodeAt(i - 1));
  }
  if (!camel && wholeToken(piece, 0, length) === BOTH) return pack(1, 1);
  if (budget.letters < length) return pack(length, length); // its bytes: the byte-level bound
  // Built of its characters: a slice of `text` may be a view of it (V8 slices strings of 13 or more
  // characters), which would keep the whole request's text alive in the map.
  let key = '';
  for (let i = 0; i < length; i++) key += String.fromCharCode(piece[i]!);
  const known = merged.get(key);
  if (known !== undefined) return known;
  budget.letters -= length;
  const cl100k = cl100kTokens(piece, 0, length);
  let o200k = 0;
  let pieceStart = 0;
  for (let i = from - lead + 1; i <= length; i++) {
    if (i === length || (isLower(piece[i - 1]!) && isUpper(piece[i]!))) {
      o200k += (wholeToken(piece, pieceStart, i) & O200K) !== 0 ? 1 : o200kTokens(piece, pieceStart, i);
      pieceStart = i;
    }
  }
  const counts = pack(o200k, cl100k);
  if (merged.size >= MERGED_KEPT) merged.clear();
  merged.set(key, counts);
  return counts;
}

const O200K = 1;
const BOTH = 3;
// Pieces merged lately (ordinary text repeats its words): at most MERGED_KEPT, forgotten all at once.
const MERGED_KEPT = 20_000;
const merged = new Map<string, number>();

const isLower = (c: number) => c >= 97 && c <= 122;

/** UTF-8 bytes of the character starting at `i` (a surrogate pair: 4; a lone surrogate becomes U+FFFD: 3). */
function utf8Bytes(text: string, i: number, c: number): number {
  if (c < 0x800) return 2;
  if (c >= 0xd800 && c <= 0xdbff) {
    const low = text.charCodeAt(i + 1);
    return low >= 0xdc00 && low <= 0xdfff ? 4 : 3;
  }
  return 3;
}

/**
 * A run of ASCII whitespace [from, to). Before other text its last character is a piece of its own
 * ("  7" is " ", " ", "7") unless it joins the word or punctuation after it; the rest is weighed
 * stretch by stretch of one character (a newline run and the indentation after it are two pieces).
 */
function whitespaceRun(text: string, from: number, to: number, end: number): number {
  let last = 0;
  if (to < end) {
    const c = text.charCodeAt(to - 1);
    const next = kind(text.charCodeAt(to));
    const joins = (c === 32 || c === 9) && (next === LETTER || (c === 32 && next === PUNCT));
    last = joins ? 0 : 1;
    to--;
  }
  return last + stretches(text, from, to);
}

function stretches(text: string, from: number, to: number): number {
  let tokens = 0;
  let i = from;
  while (i < to) {
    const c = text.charCodeAt(i);
    let j = i + 1;
    while (j < to && text.charCodeAt(j) === c) j++;
    const n = j - i;
    if (c === 32) tokens += 1 + Math.floor(n / SPACE_RUN);
    else if (c === 9) tokens += 1 + Math.floor(n / TAB_RUN);
    else if (c === 10) tokens += 1 + Math.floor(n / NEWLINE_RUN);
    else tokens += n; // \r, \v, \f: their bytes
    i = j;
  }
  return tokens;
}
