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
// capital that follows a lowercase letter — and costs the larger count. A word one token in both
// vocabularies costs one hash lookup; others are merged (~1-3 µs) and remembered. The letters of a
// run with digits or longer than 24 (hex, base64, hashes), and of words past MERGE_BUDGET letters
// merged in one estimate, count their bytes. Letters beside non-ASCII letters ("Künstliche") are
// merged as fragments, each on its own, above the whole word's cost.
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

/** Bound of the tokens of the first `end` UTF-16 units of `text`. */
export function textTokenBound(text: string, end: number): number {
  mergeBudget = MERGE_BUDGET;
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
      tokens += dense ? j - i : letterRun(text, i, j);
    } else if (k === DIGIT) {
      while (j < end && kind(text.charCodeAt(j)) === DIGIT) j++;
      tokens += Math.ceil((j - i) / 3);
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

const piece = new Uint8Array(MAX_PIECE);

/**
 * The letters [from, to), a run with no letter or digit beside it, with the space, tab or mark that
 * leads it: what each vocabulary bills for it, the larger. cl100k takes the run as one piece; o200k
 * splits it where a lowercase letter is followed by a capital ("fooBar": "foo", "Bar").
 */
function letterRun(text: string, from: number, to: number): number {
  let lead = from;
  if (from > 0) {
    const before = text.charCodeAt(from - 1);
    if (before === 32 || before === 9 || (kind(before) === PUNCT && leadsWord(text, from - 1, to))) lead = from - 1;
  }
  const length = to - lead;
  if (length > MAX_PIECE) return to - from;
  let camel = false;
  for (let i = lead; i < to; i++) {
    const c = text.charCodeAt(i);
    piece[i - lead] = c;
    camel ||= isUpper(c) && i > from && isLower(text.charCodeAt(i - 1));
  }
  if (!camel && wholeToken(piece, 0, length) === BOTH) return 1;
  const key = text.slice(lead, to);
  const known = merged.get(key);
  if (known !== undefined) return known;
  if (mergeBudget < length) return length; // its bytes: the byte-level bound
  mergeBudget -= length;
  const cl100k = cl100kTokens(piece, 0, length);
  let o200k = 0;
  let pieceStart = 0;
  for (let i = from - lead + 1; i <= length; i++) {
    if (i === length || (isLower(piece[i - 1]!) && isUpper(piece[i]!))) {
      o200k += (wholeToken(piece, pieceStart, i) & O200K) !== 0 ? 1 : o200kTokens(piece, pieceStart, i);
      pieceStart = i;
    }
  }
  const tokens = Math.max(o200k, cl100k);
  if (merged.size >= MERGED_KEPT) merged.clear();
  merged.set(key, tokens);
  return tokens;
}

const O200K = 1;
const BOTH = 3;
// Words merged lately (ordinary text repeats its words): at most MERGED_KEPT, forgotten all at once.
const MERGED_KEPT = 20_000;
const merged = new Map<string, number>();
// Letters merged per estimate: past it, words are weighed by their bytes (random letters cost
// ~0.25 µs each to merge; this bounds one estimate's merging to ~25 ms).
const MERGE_BUDGET = 100_000;
let mergeBudget = MERGE_BUDGET;

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
