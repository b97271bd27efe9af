// Large logged bodies are masked and anonymized a slice at a time: cut only where no key, address
// or number can be split, so the result is what treating the whole text at once gives.
import t from 'tap';
import { slices, transformStrings } from '../../core/sliced-text.js';
import { Anonymizer } from '../../core/anonymize.js';
import { redactText } from '../../core/redact.js';

const anonymizer = new Anonymizer({ enabled: true, fields: [], key: Buffer.alloc(32, 5) });
const treat = (text: string) => anonymizer.text(redactText(text));

t.test('slices cut between words, or after a comma or angle bracket, past 8 KB; never after a word a credential follows', async (t) => {
  const text = 'word '.repeat(3000);
  const pieces = slices(text);
  t.equal(pieces.join(''), text, 'nothing lost');
  t.ok(pieces.length >= 2 && pieces.every((piece) => piece.length <= 8200), `${pieces.length} pieces`);
  t.same(slices('x'.repeat(50_000)), ['x'.repeat(50_000)], 'no place to cut: whole');
  t.same(slices('12 '.repeat(10_000)), ['12 '.repeat(10_000)], 'digits and spaces (a phone number may span them): whole');
  t.same(slices('short'), ['short']);
  // The reviewer's case: a token after `Bearer` and a line break, straddling the 8 KB mark.
  const straddle = 'a'.repeat(8185) + ' Bearer\nZq8Wm3Kx7Lp2Rv9Tn4Bc tail words here';
  const cut = slices(straddle);
  t.ok(cut.every((piece) => !piece.endsWith('Bearer\n')), 'not cut after Bearer');
  t.notMatch(cut.map(redactText).join(''), /Zq8Wm3Kx7Lp2Rv9Tn4Bc/, 'the token is masked');
  t.notMatch((await transformStrings(straddle, treat)) as string, /Zq8Wm3Kx7Lp2Rv9Tn4Bc/);
});

t.test('sliced treatment equals treating the text whole, secrets and addresses at every offset', async (t) => {
  const line = (i: number) => `row ${i}: mail person${i % 7}@example.com, call +1 555 123 ${String(1000 + i).slice(-4)}, key sk-proj-${'a'.repeat(10)}${i} and Bearer tok${i}abcdefgh`;
  const text = Array.from({ length: 600 }, (_, i) => line(i)).join('\n');
  const body = { user: 'zed', messages: [{ role: 'user', content: text }], nested: { deep: [text.slice(0, 9000)] } };
  const sliced = (await transformStrings(anonymizer.namedFields(body), treat)) as typeof body;
  const whole = anonymizer.value({ ...body, messages: [{ role: 'user', content: redactText(text) }], nested: { deep: [redactText(text.slice(0, 9000))] } }) as typeof body;
  t.equal(sliced.messages[0]!.content, whole.messages[0]!.content);
  t.equal(sliced.nested.deep[0], whole.nested.deep[0]);
  t.equal(sliced.user, anonymizer.pseudonym('zed'));
  t.notMatch(sliced.messages[0]!.content, /@example\.com|555 123|sk-proj-a|tok\d+abc/);
  t.equal(body.messages[0]!.content, text, 'the original is not changed');
});

t.test('it yields: other work runs while a large body is treated', async (t) => {
  const text = Array.from({ length: 20_000 }, (_, i) => `line ${i} for someone${i}@example.org`).join('\n');
  let turns = 0;
  const timer = setInterval(() => turns++, 0);
  await transformStrings({ content: text }, treat);
  clearInterval(timer);
  t.ok(turns > 0, `timers ran ${turns} times meanwhile`);
});
