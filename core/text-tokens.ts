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
// - a lone space or tab before a word, a space before a punctuation mark (each " !"…" ~" is one
//   token) and a lone mark before a word (".method", "(x") are free: they join the next piece;
//   the last whitespace before anything else (a digit: "1 2 3") is a piece, a token, of its own.
// ASCII letters: a lowercase word (optionally capitalized) of L <= 16 letters is one token when the
// vocabularies hold it, and random letters ("xqzvbk") cost a token per 2-3. The word is read
// trigram by trigram against core/letter-trigrams.ts (generated from both vocabularies by
// scripts/letter-trigrams.ts): where three letters, or the word's first two, occur in fewer than
// 3 letter tokens of o200k or cl100k, the tokenizers split the word, so each stretch between
// such splits counts 1 + s/4 (at most L in all); a word with common trigrams only counts 1 + L/12,
// above what English and code words cost. The fuzz (tokens-bound.test.ts) finds no text of 10 or
// more random words, lowercase or capitalized, above the estimate (worst 0.98), but a single short
// pseudo-word with common trigrams only (" hib", " eez") is billed 2 for 1, and misspelled English
// up to ~1.5x: those are measured, not bounded. Longer letter runs, all-caps runs and 1-2 letter
// fragments inside other text (base64) are weighed by their bytes, and so are the letters of a run
// with digits or longer than 24 (hex, base64).
import { COMMON_TRIGRAMS } from './letter-trigrams.js';

const SPACE_RUN = 32;
const TAB_RUN = 8;
const NEWLINE_RUN = 8;
const PUNCTUATION_RUN = 2;
const WORD_LETTERS_PER_EXTRA_TOKEN = 12;
const SPLIT_LETTERS_PER_EXTRA_TOKEN = 4;
const LONGEST_WORD = 16; // longer letter runs are not words ("ababab…" is a token per 2 letters): their bytes
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
      // o200k splits a letter run where a lowercase letter is followed by a capital (camelCase).
      let upper = isUpper(c) ? 1 : 0;
      while (j < end) {
        const d = text.charCodeAt(j);
        if (kind(d) !== LETTER) break;
        if (isUpper(d)) {
          if (j - i > upper) break; // a capital after lowercase letters starts a new piece
          upper++;
        }
        j++;
      }
      // A piece with no letter or digit beside it is a whole word; others are fragments (camelCase, base64).
      const whole = (i === 0 || !isAlnum(text.charCodeAt(i - 1))) && (j >= end || !isAlnum(text.charCodeAt(j)));
      tokens += dense ? j - i : letterPiece(text, i, j, upper, whole);
    } else if (k === DIGIT) {
      while (j < end && kind(text.charCodeAt(j)) === DIGIT) j++;
      tokens += Math.ceil((j - i) / 3);
    } else if (k === SPACE) {
      while (j < end && kind(text.charCodeAt(j)) === SPACE) j++;
      tokens += whitespaceRun(text, i, j, end);
    } else if (k === PUNCT) {
      while (j < end && text.charCodeAt(j) === c) j++;
      // A lone mark before a letter is the word's leading character (".method", "(x", "_id").
      const leadsWord = j - i === 1 && j < end && kind(text.charCodeAt(j)) === LETTER;
      if (!leadsWord) tokens += 1 + Math.floor((j - i) / PUNCTUATION_RUN);
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

const isAlnum = (c: number) => {
  const k = kind(c);
  return k === LETTER || k === DIGIT;
};

/** The letter piece [from, to), the first `upper` of its letters capitals. */
function letterPiece(text: string, from: number, to: number, upper: number, whole: boolean): number {
  const length = to - from;
  if (!((whole || length >= 3) && length <= LONGEST_WORD && upper <= 1)) return length;
  // Lowercase words, optionally capitalized. Where three letters (or the word's first two) are a
  // trigram few tokens of either vocabulary contain, the tokenizers split the word: each stretch
  // between such splits is weighed.
  let tokens = 0;
  let start = from;
  let first = WORD_START;
  let second = (text.charCodeAt(from) | 32) - 97;
  for (let i = from + 1; i < to; i++) {
    const third = text.charCodeAt(i) - 97;
    const t = (27 * first + second) * 26 + third;
    if ((COMMON_TRIGRAM[t >> 3]! & (1 << (t & 7))) === 0) {
      tokens += 1 + Math.floor((i - start) / SPLIT_LETTERS_PER_EXTRA_TOKEN);
      start = i;
    }
    first = second;
    second = third;
  }
  if (start === from) return 1 + Math.floor(length / WORD_LETTERS_PER_EXTRA_TOKEN);
  return Math.min(length, tokens + 1 + Math.floor((to - start) / SPLIT_LETTERS_PER_EXTRA_TOKEN));
}

const WORD_START = 26;
// Bit (27 × a + b) × 26 + c: the letters abc (a = 26: the word's start) are common in tokens.
const COMMON_TRIGRAM = Uint8Array.from(Buffer.from(COMMON_TRIGRAMS, 'base64'));

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
 * stretch by stretch of one character, newlines followed by indentation as one stretch.
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
    let n = j - i;
    if (c === 10 && j < to && text.charCodeAt(j) === 32) {
      // Newlines then indentation ("\n    "): one piece.
      let k = j;
      while (k < to && text.charCodeAt(k) === 32) k++;
      tokens += 1 + Math.floor(n / NEWLINE_RUN) + Math.floor((k - j) / SPACE_RUN);
      i = k;
      continue;
    }
    if (c === 32) tokens += 1 + Math.floor(n / SPACE_RUN);
    else if (c === 9) tokens += 1 + Math.floor(n / TAB_RUN);
    else if (c === 10) tokens += 1 + Math.floor(n / NEWLINE_RUN);
    else tokens += n; // \r, \v, \f: their bytes
    i = j;
  }
  return tokens;
}
