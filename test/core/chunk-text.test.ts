// A stream chunk's text as the provider sent it (core/chunk-text.ts): kept only when it can be written
// back as one SSE data line, and `"usage":null` cut out only where the cut is certain.
import t from 'tap';
import { chunkReceivedAs, receivedText, withoutNullUsage } from '../../core/chunk-text.js';
import type { ChatChunk } from '../../core/chat-types.js';

const chunkOf = (text: string) => JSON.parse(text) as ChatChunk;

t.test('a text is kept when it is one JSON object on one line', async (t) => {
  const text = '{"id":"c","choices":[],"usage":null}';
  t.equal(receivedText(chunkReceivedAs(chunkOf(text), text)), text);
  for (const [what, other] of [
    ['over two lines', '{"id":"c",\n"choices":[]}'],
    ['a carriage return (JSON whitespace, an SSE line end)', '{"id":"c",\r"choices":[]}'],
    ['space before the object', ' {"id":"c","choices":[]}'],
    ['space after it', '{"id":"c","choices":[]} '],
  ]) {
    t.equal(receivedText(chunkReceivedAs(chunkOf(other!), other!)), undefined, what);
  }
  t.equal(JSON.stringify(chunkReceivedAs(chunkOf(text), text)), text, 'the text is not part of the chunk as JSON');
  t.strictSame(Object.keys(chunkReceivedAs(chunkOf(text), text)), ['id', 'choices', 'usage'], 'nor one of its keys');
});

t.test('a copy has no text unless given its own: it was made to change something', async (t) => {
  const text = '{"id":"c","choices":[],"usage":null}';
  const copy = { ...chunkReceivedAs(chunkOf(text), text), model: 'changed' };
  t.equal(receivedText(copy), undefined, 'a spread copy is serialized');
  chunkReceivedAs(copy, '{"id":"c","choices":[]}');
  t.equal(receivedText(copy), '{"id":"c","choices":[]}', 'unless registered anew');
});

t.test('"usage":null comes out of the top level, the rest of the text as it was', async (t) => {
  const cases: Array<[string, string]> = [
    ['{"id":"c","choices":[],"usage":null}', '{"id":"c","choices":[]}'],
    ['{"usage":null,"id":"c"}', '{"id":"c"}'],
    ['{"usage":null}', '{}'],
    ['{"id":"c","usage":null,"obfuscation":"x1"}', '{"id":"c","obfuscation":"x1"}'],
    // Inside a string every quote is escaped: "usage" there is not the key.
    ['{"c":"say \\"usage\\":null","usage":null}', '{"c":"say \\"usage\\":null"}'],
  ];
  for (const [text, cut] of cases) {
    t.equal(withoutNullUsage(text), cut, text);
    const expected = JSON.parse(text) as Record<string, unknown>;
    delete expected.usage;
    t.strictSame(JSON.parse(cut), expected, `${text}: the same JSON, without usage`);
  }
});

t.test('anything it cannot cut with certainty is left to be serialized', async (t) => {
  for (const text of [
    '{"id":"c"}', // no usage at all
    '{"id":"c","usage": null}', // space after the colon
    '{"id":"c","usage":{"total_tokens":1}}', // usage is not null
    '{"x":{"usage":null},"usage":null}', // nested and top level: which is which?
    '{"usage":null,"usage":null}', // a key twice
    '{"a \\"usage":null,"usage":null}', // a key that ends in "usage
    '{"a \\"usage":null}', // only a key that ends in "usage: not the usage key
    '{"usage":nullx}', // not JSON
  ]) {
    t.equal(withoutNullUsage(text), undefined, text);
  }
});
