// The prompt-token estimator's CPU cost per KB of text (core/tokens.ts): ordinary text (this
// repository's docs and sources) and adversarial text (whitespace mixtures, digits, rare CJK,
// combining marks, emoji sequences, random code points). Printed by npm run bench; alone:
// npx tsx bench/tokens.ts.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { estimatePromptTokens, estimateTextTokens } from '../core/tokens.js';
import { projectRoot } from '../core/paths.js';

const SIZE = 1_000_000; // characters per sample: the per-request scan budget

function read(dir: string, ext: string): string {
  return readdirSync(join(projectRoot, dir))
    .filter((file) => file.endsWith(ext))
    .map((file) => readFileSync(join(projectRoot, dir, file), 'utf8'))
    .join('\n');
}

function fill(piece: string): string {
  return piece.repeat(Math.ceil(SIZE / piece.length)).slice(0, SIZE);
}

function samples(): Record<string, string> {
  let seed = 1;
  const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
  const codePoint = () => {
    const value = next() % 0x110000;
    return value >= 0xd800 && value <= 0xdfff ? 0x3f : value; // surrogates are not code points
  };
  let state = 1; // mulberry32: letters that do not repeat (an LCG's low bits would)
  const random = () => {
    state = (state + 0x6d2b79f5) | 0;
    let x = Math.imul(state ^ (state >>> 15), 1 | state);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const letters = (n: number) => Array.from({ length: n }, () => String.fromCharCode(97 + Math.floor(random() * 26))).join('');
  const randomCodePoints = Array.from({ length: 4096 }, () => String.fromCodePoint(codePoint())).join('');
  return {
    'English prose (docs/*.md)': fill(read('docs', '.md')),
    'TypeScript (core/*.ts)': fill(read('core', '.ts')),
    'whitespace attack ("\\n\\t \\t\\n ")': fill('\n\t \t\n '),
    'digits separated by spaces': fill('1 2 3 4 5 6 7 8 9 '),
    'rare CJK ideographs': fill(Array.from({ length: 4096 }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919) % 20000))).join('')),
    'combining marks': fill('a\u0301\u0302\u0303\u0304'),
    'emoji ZWJ sequences': fill('👨‍👩‍👧‍👦🏳️‍🌈👍🏽'),
    'random code points': fill(randomCodePoints),
    // Never repeated, so that no word was merged before.
    'random 24-letter words (longest merged)': Array.from({ length: SIZE / 25 }, () => ` ${letters(24)}`).join(''),
    'random 1-8 letter pseudo-words': Array.from({ length: SIZE / 5 }, () => ` ${letters(1 + Math.floor(random() * 8))}`).join('').slice(0, SIZE),
  };
}

/** µs of CPU per KB (1,000 UTF-16 characters) of each sample, the best of five runs. */
export function measureEstimator(): Array<{ sample: string; usPerKb: number; tokensPerChar: number }> {
  const all = samples();
  // The same words as one request of 100 messages: the merge budget is the request's, not each part's.
  const words: string = all['random 24-letter words (longest merged)']!;
  const parts = Array.from({ length: 100 }, (_, i) => words.slice(i * (words.length / 100), (i + 1) * (words.length / 100)));
  const texts: Record<string, string | string[]> = { ...all, 'the same words in 100 messages': parts };
  return Object.entries(texts).map(([sample, text]) => {
    let tokens = 0;
    let best = Infinity;
    const estimate = typeof text === 'string' ? () => estimateTextTokens(text) : () => estimatePromptTokens({ model: 'x', messages: text.map((content) => ({ role: 'user', content })) });
    for (let run = 0; run < 5; run++) {
      const started = process.cpuUsage();
      tokens = estimate();
      const used = process.cpuUsage(started);
      best = Math.min(best, used.user + used.system);
    }
    const length = typeof text === 'string' ? text.length : text.join('').length;
    return { sample, usPerKb: (best * 1000) / length, tokensPerChar: tokens / length };
  });
}

export function printEstimatorCost(): void {
  console.log('\nprompt-token estimator (core/tokens.ts), 1M characters per sample, best of 5:');
  console.log('| text | µs CPU per KB | estimated tokens per character |');
  console.log('|---|---|---|');
  for (const row of measureEstimator()) console.log(`| ${row.sample} | ${row.usPerKb.toFixed(2)} | ${row.tokensPerChar.toFixed(3)} |`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) printEstimatorCost();
