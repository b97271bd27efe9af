// What o200k and cl100k bill for a word of ASCII letters, computed as their tokenizers do: a
// byte-level BPE merges, again and again, the adjacent pair whose concatenation has the lowest rank
// in the vocabulary, until no pair is a token. Only tokens made of letters (after at most one
// leading space, tab or mark) can arise inside such a word, so only they are kept:
// config/letter-tokens.br, generated from both vocabularies by scripts/letter-tokens.ts (~208k
// tokens, ~5 MB in memory as flat arrays, the file's bytes read in place; ~70 ms to load). Pieces
// of up to MAX_PIECE characters are merged (at most MAX_PIECE² steps each); callers weigh longer
// runs by their bytes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { projectRoot } from './paths.js';

/** The longest piece merged here: a lead character and up to 24 letters. */
export const MAX_PIECE = 25;
const TABLE_BITS = 19;
const TABLE_MASK = (1 << TABLE_BITS) - 1;
const NONE = 0x7fffffff;

interface Vocabularies {
  /** The file's bytes: token t is chars[start[t]..start[t] + length[t]). */
  chars: Uint8Array;
  start: Uint32Array;
  length: Uint8Array;
  /** Rank of token t in o200k and in cl100k (NONE: not a token there). */
  o200k: Int32Array;
  cl100k: Int32Array;
  /** Open addressing by FNV-1a hash: token index + 1, 0 empty. */
  table: Int32Array;
}

const hashStep = (hash: number, c: number) => Math.imul(hash ^ c, 16777619);
const HASH_SEED = 2166136261 | 0;
const NEWLINE = 10;

/**
 * Reads the file (o200k's tokens a line each in rank order, an empty line, cl100k's) in place. Runs
 * at every start, so it is kept lean: lines found with indexOf, each token hashed once and looked
 * up and inserted by the same probe.
 */
function load(): Vocabularies {
  const chars = brotliDecompressSync(readFileSync(join(projectRoot, 'config', 'letter-tokens.br')));
  let lines = 0;
  for (let at = chars.indexOf(NEWLINE); at >= 0; at = chars.indexOf(NEWLINE, at + 1)) lines++;
  const start = new Uint32Array(lines);
  const length = new Uint8Array(lines);
  const o200k = new Int32Array(lines).fill(NONE);
  const cl100k = new Int32Array(lines).fill(NONE);
  const table = new Int32Array(1 << TABLE_BITS);
  let count = 0;
  let ranks = o200k;
  let rank = 0;
  for (let at = 0; at < chars.length; ) {
    let end = chars.indexOf(NEWLINE, at);
    if (end < 0) end = chars.length;
    if (end === at) {
      ranks = cl100k; // the empty line between the lists
      rank = 0;
    } else {
      const n = end - at;
      let t = -1;
      for (let slot = hash(chars, at, end) & TABLE_MASK; ; slot = (slot + 1) & TABLE_MASK) {
        const entry = table[slot]!;
        if (entry === 0) {
          // Not seen (in o200k's list): a new token, in this empty slot.
          t = count++;
          start[t] = at;
          length[t] = n;
          table[slot] = t + 1;
          break;
        }
        if (length[entry - 1] !== n) continue;
        const s = start[entry - 1]!;
        let i = 0;
        while (i < n && chars[s + i] === chars[at + i]) i++;
        if (i === n) {
          t = entry - 1;
          break;
        }
      }
      ranks[t] = rank++;
    }
    at = end + 1;
  }
  return { chars, start, length, o200k, cl100k, table };
}

function hash(bytes: Uint8Array, from: number, to: number): number {
  let h = HASH_SEED;
  for (let i = from; i < to; i++) h = hashStep(h, bytes[i]!);
  return h;
}

/** The token spelled by piece[from..to), or -1. */
function findIn(v: Vocabularies, piece: Uint8Array, from: number, to: number): number {
  const { chars, start, length, table } = v;
  const n = to - from;
  for (let slot = hash(piece, from, to) & TABLE_MASK; ; slot = (slot + 1) & TABLE_MASK) {
    const entry = table[slot]!;
    if (entry === 0) return -1;
    const t = entry - 1;
    if (length[t] !== n) continue;
    const s = start[t]!;
    let i = 0;
    while (i < n && chars[s + i] === piece[from + i]) i++;
    if (i === n) return t;
  }
}

const vocabularies = load();
const find = (piece: Uint8Array, from: number, to: number) => findIn(vocabularies, piece, from, to);

// Scratch for one merge: part k is piece[bounds[k]..bounds[k + 1]); pair[k] the rank of parts k, k+1.
const bounds = new Int32Array(MAX_PIECE + 2);
const pair = new Int32Array(MAX_PIECE + 1);

function rankOf(ranks: Int32Array, piece: Uint8Array, from: number, to: number): number {
  const t = find(piece, from, to);
  return t < 0 ? NONE : ranks[t]!;
}

/** Tokens of piece[from..to) in one vocabulary, merged by rank as its tokenizer does. */
function merge(ranks: Int32Array, piece: Uint8Array, from: number, to: number): number {
  let parts = to - from;
  if (parts <= 1) return parts;
  for (let k = 0; k <= parts; k++) bounds[k] = from + k;
  for (let k = 0; k + 1 < parts; k++) pair[k] = rankOf(ranks, piece, from + k, from + k + 2);
  while (parts > 1) {
    let best = 0;
    for (let k = 1; k + 1 < parts; k++) if (pair[k]! < pair[best]!) best = k;
    if (pair[best] === NONE) break;
    // Parts best and best + 1 become one: drop the boundary between them.
    bounds.copyWithin(best + 1, best + 2, parts + 1);
    pair.copyWithin(best + 1, best + 2, parts);
    parts--;
    if (best + 1 < parts) pair[best] = rankOf(ranks, piece, bounds[best]!, bounds[best + 2]!);
    else pair[best] = NONE;
    if (best > 0) pair[best - 1] = rankOf(ranks, piece, bounds[best - 1]!, bounds[best + 1]!);
  }
  return parts;
}

/** Which vocabularies hold piece[from..to) as one token: bit 1 o200k, bit 2 cl100k. */
export function wholeToken(piece: Uint8Array, from: number, to: number): number {
  const t = find(piece, from, to);
  if (t < 0) return 0;
  return (vocabularies.o200k[t] !== NONE ? 1 : 0) | (vocabularies.cl100k[t] !== NONE ? 2 : 0);
}

/** Tokens of piece[from..to) in o200k, not one token of it. */
export function o200kTokens(piece: Uint8Array, from: number, to: number): number {
  return merge(vocabularies.o200k, piece, from, to);
}

/** Tokens of piece[from..to) in cl100k, not one token of it. */
export function cl100kTokens(piece: Uint8Array, from: number, to: number): number {
  return merge(vocabularies.cl100k, piece, from, to);
}
