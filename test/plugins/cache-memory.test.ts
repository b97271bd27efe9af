// The memory backend on its own: what it keeps and how it counts the memory that takes.
import t from 'tap';
import { ENTRY_OVERHEAD_BYTES, memoryBackend, owned } from '../../plugins/cache/memory.js';
import { decode, encode, type CachedAnswer } from '../../plugins/cache/entry.js';

t.test('an entry is kept in a buffer of its own, never as a slice of a shared slab', async (t) => {
  const backend = memoryBackend({ maxBytes: 1024 * 1024, ttlMs: 60_000 });
  const slab = Buffer.alloc(8192, 0x61);
  const slice = slab.subarray(100, 1100);
  backend.set('k', slice);
  const stored = (await backend.get('k'))!;
  t.same(stored, slice, 'the same bytes');
  t.equal(stored.buffer.byteLength, 1000, 'its memory is exactly its size: the 8 KB slab is not kept alive');
  slab.fill(0x62);
  t.equal(stored[0], 0x61, 'later writes to the slab do not reach the entry');
});

t.test('a buffer that owns its memory already is not copied', async (t) => {
  const own = Buffer.allocUnsafeSlow(5000).fill(1);
  t.equal(owned(own), own);
  const pooled = Buffer.from('small'); // from Node's pool
  t.not(owned(pooled), pooled);
  t.equal(owned(pooled).toString(), 'small');
});

t.test('the size bound charges each entry its bytes plus the fixed per-entry cost', async (t) => {
  const maxBytes = 3 * (1000 + ENTRY_OVERHEAD_BYTES);
  const backend = memoryBackend({ maxBytes, ttlMs: 60_000 });
  for (const key of ['a', 'b', 'c']) backend.set(key, Buffer.alloc(1000));
  t.equal(backend.stats().bytes, maxBytes);
  t.equal(backend.stats().entries, 3);
  backend.set('d', Buffer.alloc(1000));
  t.equal(backend.stats().entries, 3, 'a fourth entry evicts one');
  t.equal(backend.stats().evictions, 1);
  t.equal(await backend.get('a'), undefined, 'the least recently used');
});

t.test('encoded entries own their memory, plain or compressed, and decode back', async (t) => {
  const small: CachedAnswer = { provider: 'openai', model: 'gpt-4o-mini', completion: { id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [] } };
  const large: CachedAnswer = { ...small, completion: { ...small.completion!, id: 'é'.repeat(3000) } };
  for (const [name, answer] of [['plain', small], ['brotli', large]] as const) {
    const bytes = encode(answer, true);
    t.equal(bytes.buffer.byteLength, bytes.length, `${name}: no pool slab behind it`);
    t.same(decode(bytes), answer, `${name}: round trip`);
  }
  t.equal(encode(large, true)[0], 1, 'the large one is compressed');
  t.equal(encode(large, false)[0], 0, 'unless compression is off');
});

t.test('the completion as sent to the client is stored as is, not serialized again', async (t) => {
  const completion = { id: 'c', object: 'chat.completion' as const, created: 1, model: 'm', choices: [] };
  const answer: CachedAnswer = { provider: 'openai', model: 'gpt-4o-mini', costUsd: 0.5, completion };
  // What was sent: the same completion written with a different key order and spacing.
  const sent = '{ "model": "m", "id": "c", "object": "chat.completion", "created": 1, "choices": [] }';
  const bytes = encode(answer, false, sent);
  t.ok(bytes.toString('utf8', 1).includes(sent), 'the bytes sent are the bytes kept');
  t.same(decode(bytes), answer, 'and they decode to the same answer');
  t.same(decode(encode({ ...answer, completion: undefined, embeddings: { object: 'list', data: [], model: 'e', usage: { prompt_tokens: 1, total_tokens: 1 } } }, false, sent))?.completion, undefined, 'an answer without a completion ignores it');
});
