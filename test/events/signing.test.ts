// Signatures are checked the way a receiver checks them: with the standardwebhooks library's own
// verify, for whsec_ and raw secrets, and across a secret rotation.
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { newMessageId, Signer } from '../../plugins/events/signing.js';

const WHSEC = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
const OLD_WHSEC = `whsec_${Buffer.from('an older secret, still honoured!').toString('base64')}`;
const RAW = 'a-plain-shared-secret';
const body = JSON.stringify({ type: 'budget.threshold_reached', timestamp: '2026-11-26T14:00:00.000Z', data: { percent: 80 } });

t.test('a whsec_ secret signs what a Standard Webhooks receiver verifies', async (t) => {
  const headers = new Signer([WHSEC]).headers('msg_abc', body, new Date());
  t.same(Object.keys(headers).sort(), ['webhook-id', 'webhook-signature', 'webhook-timestamp']);
  t.equal(headers['webhook-id'], 'msg_abc');
  t.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/);
  t.same(new Webhook(WHSEC).verify(body, { ...headers }), JSON.parse(body));
});

t.test('a raw secret is the key itself: receivers verify with the raw-key form', async (t) => {
  const headers = new Signer([RAW]).headers('msg_raw', body, new Date());
  t.same(new Webhook(Buffer.from(RAW, 'utf8'), { format: 'raw' }).verify(body, { ...headers }), JSON.parse(body));
  t.same(new Webhook(RAW, { format: 'raw' }).verify(body, { ...headers }), JSON.parse(body), 'the library raw string form agrees for ASCII');
  t.throws(() => new Webhook(`whsec_${Buffer.from(RAW).toString('base64')}`).verify(body, { ...headers, 'webhook-signature': 'v1,wrong' }));
});

t.test('a non-ASCII raw secret is keyed by its UTF-8 bytes', async (t) => {
  const secret = 'sécret-🔑';
  const headers = new Signer([secret]).headers('msg_utf8', body, new Date());
  t.same(new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }).verify(body, { ...headers }), JSON.parse(body));
  t.same(new Webhook(`whsec_${Buffer.from(secret, 'utf8').toString('base64')}`).verify(body, { ...headers }), JSON.parse(body), 'same as its base64 whsec_ form');
});

t.test('while rotating, each secret signs, current first, and either receiver verifies', async (t) => {
  const at = new Date();
  const headers = new Signer([WHSEC, OLD_WHSEC]).headers('msg_rot', body, at);
  const signatures = headers['webhook-signature'].split(' ');
  t.equal(signatures.length, 2);
  t.equal(signatures[0], new Webhook(WHSEC).sign('msg_rot', at, body), 'the current secret first');
  t.equal(signatures[1], new Webhook(OLD_WHSEC).sign('msg_rot', at, body));
  t.ok(new Webhook(WHSEC).verify(body, { ...headers }), 'a receiver on the new secret');
  t.ok(new Webhook(OLD_WHSEC).verify(body, { ...headers }), 'a receiver still on the old secret');
  t.throws(() => new Webhook(`whsec_${Buffer.from('someone else entirely').toString('base64')}`).verify(body, { ...headers }), { message: 'No matching signature found' });
});

t.test('a tampered body, id or timestamp fails verification', async (t) => {
  const headers = new Signer([WHSEC]).headers('msg_t', body, new Date());
  const receiver = new Webhook(WHSEC);
  t.throws(() => receiver.verify(body.replace('80', '99'), { ...headers }));
  t.throws(() => receiver.verify(body, { ...headers, 'webhook-id': 'msg_other' }));
  t.throws(() => receiver.verify(body, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) - 1) }));
});

t.test('the timestamp is the signing time in whole seconds; a retry keeps its webhook-id', async (t) => {
  const signer = new Signer([WHSEC]);
  const id = newMessageId();
  const first = signer.headers(id, body, new Date('2026-11-26T14:00:00.900Z'));
  const retry = signer.headers(id, body, new Date('2026-11-26T14:05:00.000Z'));
  t.equal(first['webhook-timestamp'], String(Date.parse('2026-11-26T14:00:00Z') / 1000));
  t.equal(first['webhook-id'], id);
  t.equal(retry['webhook-id'], id);
  t.not(first['webhook-signature'], retry['webhook-signature'], 'a new timestamp, a new signature');
});

t.test('message ids are msg_ and 24 random hex characters', async (t) => {
  const ids = new Set(Array.from({ length: 100 }, newMessageId));
  t.equal(ids.size, 100);
  for (const id of ids) t.match(id, /^msg_[0-9a-f]{24}$/);
});

t.test('unusable secrets are refused without being quoted', async (t) => {
  t.throws(() => new Signer([]), { message: /at least one secret/ });
  t.throws(() => new Signer(['']), { message: /must not be empty/ });
  for (const bad of ['whsec_', 'whsec_not*base64!']) {
    t.throws(() => new Signer([bad]), { message: 'A whsec_ webhook secret must be non-empty base64 after the prefix' }, bad);
  }
});
