// Generates config/letter-tokens.br: the tokens of o200k and cl100k (gpt-tokenizer) made of ASCII
// letters, optionally after one leading space, tab or ASCII mark (" word", "Word", ".method"),
// each vocabulary's list in rank order. core/letter-bpe.ts merges a word's letters with these ranks
// as the tokenizers do, so a word's estimate is what each vocabulary bills for it. Run:
// npx tsx scripts/letter-tokens.ts; test/core/tokens-bound.test.ts fails when the file is stale.
// It needs the dev dependencies, so tsconfig.build.json leaves it out of the build.
import { writeFileSync } from 'node:fs';
import { brotliCompressSync, constants } from 'node:zlib';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as o200k from 'gpt-tokenizer/encoding/o200k_base';
import * as cl100k from 'gpt-tokenizer/encoding/cl100k_base';
import { projectRoot } from '../core/paths.js';

const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_LGWIN]: 24 } };

type Vocabulary = { decode(tokens: number[]): string; vocabularySize: number };

/** A token of letters, after at most one leading space, tab or ASCII mark. */
export const LETTER_TOKEN = /^[\t !-/:-@[-`{-~]?[A-Za-z]+$/;

/** The vocabulary's letter tokens of two or more characters, lowest rank (id) first. */
function letterTokens(vocabulary: Vocabulary): string[] {
  const tokens: string[] = [];
  for (let id = 0; id < vocabulary.vocabularySize; id++) {
    let text: string;
    try {
      text = vocabulary.decode([id]);
    } catch {
      continue;
    }
    if (text.length >= 2 && LETTER_TOKEN.test(text)) tokens.push(text);
  }
  return tokens;
}

/** The file's text: o200k's list, an empty line, cl100k's list, one token a line. */
export function letterTokensText(): string {
  return `${letterTokens(o200k as unknown as Vocabulary).join('\n')}\n\n${letterTokens(cl100k as unknown as Vocabulary).join('\n')}\n`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  writeFileSync(join(projectRoot, 'config', 'letter-tokens.br'), brotliCompressSync(letterTokensText(), BROTLI));
}
