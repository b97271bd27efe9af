// What the anonymizer replaces — named fields however deep, e-mail addresses and phone numbers in
// any text — and what it leaves alone (dates, versions, counts), with stable keyed pseudonyms.
import t from 'tap';
import { Anonymizer } from '../../core/anonymize.js';

const key = Buffer.alloc(32, 7);
const anon = new Anonymizer({ enabled: true, fields: [], key });

t.test('a pseudonym is keyed and stable', async (t) => {
  t.match(anon.pseudonym('alice'), /^anon_[0-9a-f]{16}$/);
  t.equal(anon.pseudonym('alice'), anon.pseudonym('alice'));
  t.not(anon.pseudonym('alice'), anon.pseudonym('bob'));
  t.not(new Anonymizer({ enabled: true, fields: [], key: Buffer.alloc(32, 8) }).pseudonym('alice'), anon.pseudonym('alice'));
});

t.test('e-mail addresses and phone numbers in text', async (t) => {
  const text = anon.text('Mail Alice.Smith@Example.com or call +44 20 7946 0958, (555) 123-4567, 555.123.4567 or 5551234567.');
  t.notMatch(text, /Alice|example|7946|555/i);
  t.equal((text.match(/anon_[0-9a-f]{16}/g) ?? []).length, 5);
  // The same address however it is cased: one pseudonym.
  t.equal(anon.text('alice.smith@example.com'), anon.text('ALICE.SMITH@EXAMPLE.COM'));
  t.equal(anon.text('+1 555 123 4567'), anon.text('+1-555-123-4567'));
});

t.test('what is not a phone number or address stays', async (t) => {
  for (const text of ['on 2026-11-26 at 10:30', 'version 1.2.3 on 192.168.10.20', 'took 1234 ms for 56789 tokens', 'an @mention and user@localhost', 'gpt-4o-2024-08-06']) {
    t.equal(anon.text(text), text, text);
  }
});

t.test('named fields, however deep, and the user field', async (t) => {
  const body = { model: 'gpt-4o', user: 'customer-42', metadata: { user_id: 'u-1', Email: 'x', phone: 5551234567, team: 'blue' }, messages: [{ role: 'user', content: 'I am bob@example.org' }] };
  const copy = anon.value(body) as typeof body & { metadata: Record<string, unknown> };
  t.equal(copy.user, anon.pseudonym('customer-42'));
  t.equal(copy.metadata.user_id, anon.pseudonym('u-1'));
  t.equal(copy.metadata.Email, anon.pseudonym('x'));
  t.equal(copy.metadata.phone, anon.pseudonym('5551234567'));
  t.equal(copy.metadata.team, 'blue');
  t.equal(copy.model, 'gpt-4o');
  t.equal(copy.messages[0]!.content, `I am ${anon.pseudonym('bob@example.org')}`);
  // The original is untouched.
  t.equal(body.user, 'customer-42');
  t.equal(body.messages[0]!.content, 'I am bob@example.org');
});

t.test('fields named by the setting replace the defaults', async (t) => {
  const custom = new Anonymizer({ enabled: true, fields: ['account'], key });
  const copy = custom.value({ account: 'acme', user_id: 'u-1', user: 'end-user' }) as Record<string, string>;
  t.equal(copy.account, custom.pseudonym('acme'));
  t.equal(copy.user_id, 'u-1');
  t.equal(copy.user, custom.pseudonym('end-user'), 'the OpenAI user field always');
});

t.test('disabled: everything as is', async (t) => {
  const off = new Anonymizer({ enabled: false, fields: [], key });
  const body = { user: 'u', content: 'bob@example.org' };
  t.equal(off.value(body), body);
  t.equal(off.text('bob@example.org'), 'bob@example.org');
});

t.test('linear time on long hostile runs', async (t) => {
  for (const text of ['a'.repeat(2_000_000), '1'.repeat(2_000_000), '1-'.repeat(1_000_000), 'a.'.repeat(500_000) + '@', ('x@' + 'a'.repeat(60) + '.').repeat(20_000)]) {
    const started = performance.now();
    anon.text(text);
    t.ok(performance.now() - started < 5000, `${text.slice(0, 8)}… in bounded time`);
  }
});

t.test('deeply nested values are cut, not walked without end', async (t) => {
  let deep: unknown = 'bob@example.org';
  for (let i = 0; i < 10_000; i++) deep = [deep];
  t.doesNotThrow(() => anon.value(deep));
});

t.test('ids and timestamps are not phone numbers', async (t) => {
  for (const text of ['req 550e8400-e29b-41d4-a716-446655440000', 'id 123e4567-e89b-12d3-a456-426614174000 ok', 'at 2026-11-26T11:14:55.123Z']) {
    t.equal(anon.text(text), text, text);
  }
});

t.test('nothing changed: the same object, not a copy', async (t) => {
  const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }], n: 1 };
  t.equal(anon.value(body), body);
  const changed = anon.value({ a: { b: 'x' }, c: 'bob@example.org' }) as Record<string, unknown>;
  t.not(changed.c, 'bob@example.org');
});

t.test('numbers side by side are replaced whole, none left in part (review)', async (t) => {
  for (const text of ['Phones: 555 123 4567 555 987 6543', '2026-11-26 555-123-4567 missed call', 'Numbers 415.555.0134 415.555.0199', 'qty 20 30 40 555 123 4567']) {
    const out = anon.text(text);
    t.notMatch(out, /555|0134|0199|4567/, `${text} → ${out}`);
  }
});

t.test("a named field's object is walked, not replaced: tool schemas stay valid (review)", async (t) => {
  const tool = { type: 'function', function: { name: 'contact', parameters: { type: 'object', properties: { email: { type: 'string', format: 'email', description: 'where to write' }, phone: { type: 'string' } }, required: ['email'] } } };
  t.same(anon.value({ tools: [tool] }), { tools: [tool] }, 'unchanged');
  const copy = anon.value({ metadata: { email: ['a@b.co', 'x'], phone: { home: '+1 555 123 4567' } } }) as any;
  t.equal(copy.metadata.email[0], anon.pseudonym('a@b.co'), 'an array of values under a named field');
  t.equal(copy.metadata.phone.home, anon.text('+1 555 123 4567'), 'an object under it: its text treated as text');
});

t.test('pseudonyms are idempotent, and a named value agrees with the same value in text (review)', async (t) => {
  const once = anon.pseudonym('alice');
  t.equal(anon.pseudonym(once), once);
  t.same(anon.value({ user: once }), { user: once });
  const named = anon.value({ email: 'John@X.com', phone: '+1 (555) 123-4567' }) as Record<string, string>;
  t.equal(named.email, anon.text('john@x.com'));
  t.equal(named.phone, anon.text('+1 555 123 4567'));
});

t.test('the yielding variants give what the plain ones give, and let timers run', async (t) => {
  const body = { user: 'u-1', messages: Array.from({ length: 50 }, (_, i) => ({ role: 'user', content: `line ${i}: mail p${i}@example.com, call 555 123 ${String(1000 + i)}. `.repeat(200) })) };
  let turns = 0;
  const timer = setInterval(() => turns++, 0);
  const yielded = await anon.valueYielding(body);
  clearInterval(timer);
  t.same(yielded, anon.value(body));
  t.ok(turns > 0, `timers ran ${turns} times meanwhile`);
  t.equal(await anon.textYielding('12 '.repeat(100_000)), anon.text('12 '.repeat(100_000)));
});
