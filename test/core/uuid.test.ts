// core/uuid.ts: the ids the gateway gives requests, budget reservations and ledger rows. They must
// read exactly as crypto.randomUUID's (version 4, RFC 9562 variant), never repeat, and take every
// random digit from the CSPRNG: no position fixed but the version and the variant's.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { uuid } from '../../core/uuid.js';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

t.test('the format of crypto.randomUUID', async (t) => {
  t.match(randomUUID(), V4, 'the pattern is the one Node writes');
  const ids = Array.from({ length: 1000 }, uuid);
  t.equal(ids.filter((id) => V4.test(id)).length, 1000, 'every id is a version-4 UUID in lower case');
  t.equal(new Set(ids.map((id) => id.length)).size, 1, 'all 36 characters long');
});

t.test('unique across many refills of the random pool', async (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 20_000; i++) seen.add(uuid());
  t.equal(seen.size, 20_000, '20,000 ids (156 refills of 128), no repeat');
});

t.test('every digit but the version and the variant is random', async (t) => {
  const ids = Array.from({ length: 2000 }, uuid);
  const digits = ids[0]!.replaceAll('-', '').length;
  const fixed: number[] = [];
  for (let position = 0; position < digits; position++) {
    const values = new Set(ids.map((id) => id.replaceAll('-', '')[position]));
    // 2000 draws of 16 values (4 for the variant's digit): each value shows up, all but by a 1e-50 chance.
    if (position === 12) t.same([...values], ['4'], 'the version digit is 4');
    else if (position === 16) t.equal(values.size, 4, 'the variant digit takes 8, 9, a and b');
    else if (values.size !== 16) fixed.push(position);
  }
  t.same(fixed, [], 'each of the other 30 digits takes all 16 values');
});

t.test('ids made before and after a refill are independent strings', async (t) => {
  // The text is built in a reused buffer: an id handed out earlier must not change with later ones.
  const first = uuid();
  const codes = Array.from(first, (c) => c.charCodeAt(0));
  const later = Array.from({ length: 300 }, uuid);
  t.same(Array.from(first, (c) => c.charCodeAt(0)), codes, 'the first id reads the same after 300 more');
  t.notOk(later.includes(first), 'and none of them repeats it');
});
