// Money fixtures for cost tests: a catalog file that prices the fake upstream's model at round
// numbers ($1 per 1M tokens in and out), and the gateway's own estimate of a request on it.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { estimatePromptTokens } from '../../core/tokens.js';
import type { ChatRequest } from '../../core/chat-types.js';

/** USD per token of gpt-4o-mini in the test catalog. */
export const PRICE = 1e-6;

/** A catalog override file: gpt-4o-mini at $1/1M in and out, plus `mystery-1`, which has no price. */
export function testCatalog(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'modelgate-catalog-')), 'models.json');
  writeFileSync(
    file,
    JSON.stringify({
      models: [
        { provider: 'openai', id: 'gpt-4o-mini', price: { input: PRICE, output: PRICE, cached_input: PRICE / 2 } },
        { provider: 'openai', id: 'mystery-1', price: { input: null, output: null } },
      ],
    }),
  );
  return file;
}

export function chatRequest(maxTokens: number, extra: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'You are a concise assistant.' },
      { role: 'user', content: 'What is the capital of France?' },
    ],
    max_tokens: maxTokens,
    ...extra,
  };
}

/** USD the gateway reserves for `request` on the test-priced model. */
export function estimateOf(request: ChatRequest): number {
  return (estimatePromptTokens(request) + (request.max_tokens ?? 256)) * PRICE;
}

/** The fixture answers report 24 prompt + 8 completion tokens: $32e-6 at the test price. */
export const FIXTURE_COST = 32 * PRICE;

export function near(a: number, b: number): boolean {
  return Math.abs(a - b) < 1e-9;
}
