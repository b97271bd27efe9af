// Run as a child (`node --expose-gc --import=tsx`) by cache-memory-bound.test.ts: fills a memory
// cache of CACHE_BOUND_MB with realistic entries (~900-byte answers under unique keys), turns it
// over TURNOVERS times as a soak of unique prompts would, and prints on stdout, as JSON, what
// process.memoryUsage() grew by after a full GC.
import { createHash } from 'node:crypto';
import { memoryBackend } from '../../plugins/cache/memory.js';
import { encode, type CachedAnswer } from '../../plugins/cache/entry.js';

const gc = (globalThis as { gc?: () => void }).gc!;
const maxBytes = Number(process.env.CACHE_BOUND_MB) * 1024 * 1024;
const turnovers = Number(process.env.TURNOVERS ?? 3);

function answer(i: number): CachedAnswer {
  const content = `Answer ${i}: ${'The capital of France is Paris, long the centre of its government, culture and commerce. '.repeat(8)}`.slice(0, 560);
  return {
    provider: 'openai',
    model: 'gpt-4o-mini',
    usage: { prompt_tokens: 24, completion_tokens: 120, total_tokens: 144 },
    costUsd: 0.0000756,
    completion: { id: `chatcmpl-${i}`, object: 'chat.completion', created: 1741570283, model: 'gpt-4o-mini-2024-07-18', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] },
  } as CachedAnswer;
}

const measure = () => {
  gc();
  gc();
  return process.memoryUsage();
};
const before = measure();
const backend = memoryBackend({ maxBytes, ttlMs: 3_600_000 });
let payload = 0;
let sets = 0;
for (let round = 0; round < turnovers; round++) {
  const evictionsBefore = backend.stats().evictions;
  // One turnover: until as many entries were evicted as the cache holds (or, the first time, it is full).
  while (round === 0 ? backend.stats().bytes < maxBytes - 4096 : backend.stats().evictions - evictionsBefore < backend.stats().entries) {
    const bytes = encode(answer(sets), true);
    if (round === 0) payload += bytes.length;
    backend.set(`cache:v1:${createHash('sha256').update(String(sets++)).digest('base64url')}`, bytes);
  }
}
const after = measure();
const stats = backend.stats();
process.stdout.write(
  JSON.stringify({
    sets,
    entries: stats.entries,
    charged: stats.bytes,
    payloadPerEntry: payload / stats.entries,
    rss: after.rss - before.rss,
    heapUsed: after.heapUsed - before.heapUsed,
    external: after.external - before.external,
  }) + '\n',
);
