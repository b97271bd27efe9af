// The memory backend on its own: what it keeps and how it counts the memory that takes.
import t from 'tap';
import { entryCost, memoryBackend } from '../../plugins/cache/memory.js';
import { BLOCK_BYTES, BlockStore } from '../../plugins/cache/blocks.js';
import { brotliCompressSync, brotliDecompressSync } from 'node:zlib';
import { chunkReceivedAs } from '../../core/chunk-text.js';
import type { ChatChunk } from '../../core/chat-types.js';
import { decode, encode, storedCompletion, type CachedAnswer } from '../../plugins/cache/entry.js';

t.test('an entry is kept as a copy: later writes to the bytes it was given do not reach it', async (t) => {
  const backend = memoryBackend({ maxBytes: 1024 * 1024, ttlMs: 60_000 });
  const slab = Buffer.alloc(8192, 0x61);
  const slice = slab.subarray(100, 1100);
  backend.set('k', slice);
  slab.fill(0x62);
  const stored = (await backend.get('k'))!;
  t.same(stored, Buffer.alloc(1000, 0x61), 'the bytes as they were stored');
});

t.test('entries of every length round-trip through the blocks, which are reused once freed', async (t) => {
  const store = new BlockStore();
  const lengths = [0, 1, BLOCK_BYTES - 4, BLOCK_BYTES - 3, BLOCK_BYTES, 3 * BLOCK_BYTES + 17, 70_000];
  const heads = lengths.map((length, i) => store.write(Buffer.alloc(length, i + 1)));
  lengths.forEach((length, i) => t.same(store.read(heads[i]!), Buffer.alloc(length, i + 1), `${length} bytes`));
  const capacity = store.capacity;
  for (let round = 0; round < 100; round++) {
    for (const head of heads.splice(0)) store.free(head);
    for (const length of lengths) heads.push(store.write(Buffer.alloc(length, round)));
  }
  t.equal(store.capacity, capacity, 'a hundred turnovers allocate no new slab');
  t.same(store.read(heads.at(-1)!), Buffer.alloc(70_000, 99));
});

t.test('the size bound charges each entry its blocks, its key and its slots', async (t) => {
  const cost = entryCost('a', 1000);
  t.ok(cost > 1000 + 16 && cost < 1500, `${cost} bytes for 1000`);
  const maxBytes = 3 * cost;
  const backend = memoryBackend({ maxBytes, ttlMs: 60_000 });
  for (const key of ['a', 'b', 'c']) backend.set(key, Buffer.alloc(1000));
  t.equal(backend.stats().bytes, maxBytes);
  t.equal(backend.stats().entries, 3);
  backend.set('d', Buffer.alloc(1000));
  t.equal(backend.stats().entries, 3, 'a fourth entry evicts one');
  t.equal(backend.stats().evictions, 1);
  t.equal(await backend.get('a'), undefined, 'the least recently used');
  backend.set('b', Buffer.alloc(10));
  t.equal(backend.stats().bytes, 2 * cost + entryCost('b', 10), 'a replaced entry is charged anew');
  backend.set('huge', Buffer.alloc(maxBytes));
  t.equal(await backend.get('huge'), undefined, 'an entry larger than the bound is not stored');
});

t.test('encoded entries decode back, plain or compressed', async (t) => {
  const small: CachedAnswer = { provider: 'openai', model: 'gpt-4o-mini', completion: { id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [] } };
  const large: CachedAnswer = { ...small, completion: { ...small.completion!, id: 'é'.repeat(3000) } };
  for (const [name, answer] of [['plain', small], ['brotli', large]] as const) t.same(decode(encode(answer, true)), answer, `${name}: round trip`);
  t.equal(encode(large, true)[0], 1, 'the large one is compressed');
  t.equal(encode(large, false)[0], 0, 'unless compression is off');
});

t.test('the completion as sent to the client is stored as is, apart, and read back as those bytes', async (t) => {
  const completion = { id: 'c', object: 'chat.completion' as const, created: 1, model: 'm', choices: [] };
  const answer: CachedAnswer = { provider: 'openai', model: 'gpt-4o-mini', costUsd: 0.5, completion };
  // What was sent: the same completion written with a different key order and spacing.
  const sent = '{ "model": "m", "id": "c", "object": "chat.completion", "created": 1, "choices": [] }';
  for (const [name, compress, padding, format] of [['plain', false, 0, 2], ['brotli', true, 3000, 3]] as const) {
    const sentHere = sent.replace('"m"', JSON.stringify('m'.repeat(padding + 1)));
    const bytes = encode(answer, compress, sentHere);
    t.equal(bytes[0], format, `${name}: format ${format}`);
    const read = decode(bytes)!;
    t.equal(read.completion, undefined, `${name}: the completion is not parsed on read`);
    t.equal(read.completionBytes!.toString('utf8'), sentHere, `${name}: the bytes sent are the bytes read back`);
    const { completionBytes: _bytes, ...rest } = read;
    t.strictSame(rest, { provider: 'openai', model: 'gpt-4o-mini', costUsd: 0.5 }, `${name}: the rest as stored`);
    t.same(storedCompletion(read), JSON.parse(sentHere), `${name}: and parsed when asked for`);
  }
  t.same(decode(encode({ ...answer, completion: undefined, embeddings: { object: 'list', data: [], model: 'e', usage: { prompt_tokens: 1, total_tokens: 1 } } }, false, sent))?.completion, undefined, 'an answer without a completion ignores it');
});

t.test("a streamed answer's chunks are stored as the provider sent them, when every chunk kept its text", async (t) => {
  const texts = ['{"id":"c", "object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}],"weight":1.50}', '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}'];
  const chunks = texts.map((text) => chunkReceivedAs(JSON.parse(text) as ChatChunk, text));
  const answer: CachedAnswer = { provider: 'openai', model: 'gpt-4o-mini', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, chunks };
  for (const compress of [false, true]) {
    const stored = encode({ ...answer, chunks: [...chunks, ...Array.from({ length: compress ? 40 : 0 }, () => chunks[0]!)] }, compress);
    const json = (compress ? brotliDecompressSync(stored.subarray(1)) : stored.subarray(1)).toString('utf8');
    t.ok(json.includes(texts[0]!), `compress ${compress}: the provider's text, spacing and 1.50 included`);
    t.strictSame(decode(stored), JSON.parse(JSON.stringify({ ...answer, chunks: JSON.parse(`[${[...texts, ...Array.from({ length: compress ? 40 : 0 }, () => texts[0])].join(',')}]`) })), `compress ${compress}: read back as the same answer`);
  }
  const changed = [chunks[0]!, { ...chunks[1]!, model: 'other' }];
  const mixed = encode({ ...answer, chunks: changed }, false).subarray(1).toString('utf8');
  t.equal(mixed, JSON.stringify({ ...answer, chunks: changed }), 'a chunk without its text: the whole answer serialized');
});

t.test('entries of the earlier format (the answer as one JSON) are still read; damaged split entries read as misses', async (t) => {
  const answer: CachedAnswer = { provider: 'openai', model: 'gpt-4o-mini', completion: { id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [] } };
  const json = Buffer.from(JSON.stringify(answer));
  t.same(decode(Buffer.concat([Buffer.from([0]), json])), answer, 'format 0, plain');
  t.same(decode(Buffer.concat([Buffer.from([1]), brotliCompressSync(json)])), answer, 'format 1, brotli');
  const good = encode(answer, false, JSON.stringify(answer.completion));
  t.ok(decode(good));
  t.equal(decode(good.subarray(0, good.length - 1)), undefined, 'a cut completion (not a JSON object) is never written to a client');
  const longHead = Buffer.from(good);
  longHead.writeUInt32BE(good.length, 1);
  t.equal(decode(longHead), undefined, 'a head length past the end');
  t.equal(decode(Buffer.from([9, 1, 2, 3])), undefined, 'an unknown format');
  const packed = encode(answer, true, JSON.stringify({ ...answer.completion, id: 'x'.repeat(3000) }));
  t.equal(packed[0], 3, 'a compressed split entry');
  t.ok(decode(packed));
  t.equal(decode(packed.subarray(0, packed.length - 8)), undefined, 'a cut compressed entry');
});
