import t from 'tap';
import type { ServerResponse } from 'node:http';
import { MAX_EVENT_CHARS, SseEventTooLarge, SseParser, SseWriter } from '../../core/sse.js';
import { fixture } from '../helpers/fake-provider.js';

const parseAll = (parts: Array<string | Buffer>) => {
  const parser = new SseParser();
  const events = parts.flatMap((part) => parser.push(part));
  return [...events, ...parser.end()];
};

t.test('LF framing with named events', async (t) => {
  const events = parseAll(['event: message_start\ndata: {"a":1}\n\nevent: ping\ndata: {}\n\n']);
  t.same(events, [
    { event: 'message_start', data: '{"a":1}', id: undefined },
    { event: 'ping', data: '{}', id: undefined },
  ]);
});

t.test('CRLF framing (Gemini) and bare CR', async (t) => {
  t.same(parseAll(['data: one\r\n\r\ndata: two\r\n\r\n']).map((e) => e.data), ['one', 'two']);
  t.same(parseAll(['data: one\r\rdata: two\r\r']).map((e) => e.data), ['one', 'two']);
});

t.test('a CRLF split between two chunks is one line break', async (t) => {
  t.same(parseAll(['data: one\r', '\n\r\n', 'data: two\n\n']).map((e) => e.data), ['one', 'two']);
});

t.test('events split at any byte, including inside a UTF-8 character', async (t) => {
  const bytes = Buffer.from('data: {"text":"Paris ✈ 東京"}\n\n');
  const events = parseAll([...bytes].map((byte) => Buffer.from([byte])));
  t.same(events.map((e) => JSON.parse(e.data).text), ['Paris ✈ 東京']);
});

t.test('an event of megabytes arriving in many reads is one event, its line kept aside until it ends', async (t) => {
  const payload = 'x'.repeat(2 * 1024 * 1024);
  const wire = `data: {"image":"${payload}"}\n\ndata: next\n\n`;
  const parts: string[] = [];
  for (let i = 0; i < wire.length; i += 64 * 1024) parts.push(wire.slice(i, i + 64 * 1024));
  const events = parseAll(parts);
  t.equal(events.length, 2);
  t.equal(JSON.parse(events[0]!.data).image.length, payload.length);
  t.equal(events[1]!.data, 'next');
});

t.test('a CR ending one read, then reads without a line end: the later LF ends a line of its own', async (t) => {
  // The CR ends "data: one"; "data: tw" and "o" have no line end; the LF ends "data: two".
  t.same(parseAll(['data: one\r', 'data: tw', 'o', '\n\n']).map((e) => e.data), ['one\ntwo']);
  t.same(parseAll(['data: a', 'b', 'c']).map((e) => e.data), ['abc'], 'a final unfinished line still counts');
});

t.test('multi-line data joins with newlines; comments and empty events are skipped', async (t) => {
  const events = parseAll([': keep-alive\n\nevent: x\n\ndata: a\ndata: b\nid: 7\n\n']);
  t.same(events, [{ event: undefined, data: 'a\nb', id: '7' }]);
});

t.test('a final event without its blank line still counts', async (t) => {
  t.same(parseAll(['data: [DONE]']).map((e) => e.data), ['[DONE]']);
});

t.test('the golden transcripts parse to their documented event counts', async (t) => {
  t.equal(parseAll([fixture('openai/stream.sse')]).length, 8);
  t.equal(parseAll([fixture('anthropic/stream.sse')]).length, 9);
  t.equal(parseAll([fixture('gemini/stream.sse')]).length, 3);
  t.equal(parseAll([fixture('cohere/stream.sse')]).length, 11);
  t.equal(parseAll([fixture('mistral/stream.sse')]).length, 6);
});

t.test('a line or event larger than the limit fails the stream instead of growing without bound', async (t) => {
  t.equal(MAX_EVENT_CHARS, 16 * 1024 * 1024, 'the default limit: 16 Mi characters');
  const small = () => new SseParser(100);
  // A line that never ends, arriving in pieces.
  const endless = small();
  t.same(endless.push('data: ' + 'x'.repeat(50)), []);
  t.throws(() => endless.push('x'.repeat(60)), SseEventTooLarge);
  // Many short data lines of one event.
  t.throws(() => small().push('data: aaaaaaaaaa\n'.repeat(12)), SseEventTooLarge);
  // Events under the limit, however many, are fine.
  const many = small();
  t.equal(Array.from({ length: 50 }, () => many.push('data: ' + 'y'.repeat(80) + '\n\n')).flat().length, 50);
});

t.test('SseWriter.sendAll writes several events in one write, framed as send frames each; nothing for none', async (t) => {
  const writes: string[] = [];
  const res = { destroyed: false, writable: true, write: (text: string) => writes.push(text) } as unknown as ServerResponse;
  const writer = new SseWriter(res);
  writer.sendAll([{ a: 1 }, '{"b":2}', { c: 'x\ny' }]);
  t.same(writes, ['data: {"a":1}\n\ndata: {"b":2}\n\ndata: {"c":"x\\ny"}\n\n']);
  writer.sendAll([]);
  t.equal(writes.length, 1, 'no empty write');
  const parser = new SseParser();
  t.same(
    parser.push(writes[0]!).map((event) => JSON.parse(event.data)),
    [{ a: 1 }, { b: 2 }, { c: 'x\ny' }],
    'the same events a reader gets from three sends',
  );
});
