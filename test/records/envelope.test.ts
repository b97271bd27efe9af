// The encryption of request records without a database: the envelope round-trips; a changed byte, a
// ciphertext moved to another record or field, a relabelled key id or a wrong key fails with a clear
// EnvelopeError; rotation (a later period) seals under a new key id while old envelopes still open;
// a deleted keyring entry makes its envelopes unreadable; the anonymization key never rotates; the
// embedded key file is created 0600, atomically, reused, never overwritten.
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { ConfigError } from '../../core/config.js';
import { RecordKeys, loadRecordKeys, MASTER_KEY_FILE } from '../../core/records/keyring.js';
import { EnvelopeError, envelopeKeyId, open, seal } from '../../core/records/envelope.js';
import { captureLogs } from './logs.js';

const silent = pino({ level: 'silent' });
const DAY = 86_400_000;
const master = randomBytes(32);
const id = `rec_${'a'.repeat(32)}`;
const other = `rec_${'b'.repeat(32)}`;

function errorOf(fn: () => unknown): EnvelopeError {
  try {
    fn();
  } catch (error) {
    if (error instanceof EnvelopeError) return error;
    throw error;
  }
  throw new Error('no error');
}

/** `envelope` with one byte of its `part` (2 IV, 3 ciphertext, 4 tag) flipped. */
function flip(envelope: string, part: number): string {
  const parts = envelope.split('.');
  const bytes = Buffer.from(parts[part]!, 'base64url');
  bytes[0]! ^= 0x01;
  parts[part] = bytes.toString('base64url');
  return parts.join('.');
}

t.test('an envelope round-trips and says its version and key id', async (t) => {
  const keys = new RecordKeys(master, new Map(), 30, () => 100 * 30 * DAY + 5);
  const current = keys.current();
  t.equal(current.id, 'm30d100');
  const envelope = seal(current, id, 'request', '{"hello":"wörld"}');
  t.match(envelope, /^v1\.m30d100\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
  t.notMatch(envelope, /hello/);
  t.equal(envelopeKeyId(envelope), 'm30d100');
  t.equal(open(keys, id, 'request', envelope), '{"hello":"wörld"}');
  // A fresh IV each time: the same text never seals the same way twice.
  t.not(seal(current, id, 'request', 'x'), seal(current, id, 'request', 'x'));
});

t.test('a changed byte, another record, another field, a relabelled or a wrong key fail to decrypt', async (t) => {
  const keys = new RecordKeys(master, new Map(), 30, () => 100 * 30 * DAY);
  const envelope = seal(keys.current(), id, 'request', 'the body');
  for (const part of [2, 3, 4]) {
    const error = errorOf(() => open(keys, id, 'request', flip(envelope, part)));
    t.equal(error.reason, 'authentication_failed', `a flipped byte in part ${part}`);
    t.match(error.message, /does not decrypt with key m30d100: it was altered, belongs to another record/);
  }
  t.equal(errorOf(() => open(keys, other, 'request', envelope)).reason, 'authentication_failed', 'moved to another record id');
  t.equal(errorOf(() => open(keys, id, 'response', envelope)).reason, 'authentication_failed', 'moved to another field of the record');
  // Relabelled to a key that exists (the previous period's): the key id is authenticated too.
  const relabelled = envelope.replace('.m30d100.', '.m30d99.');
  t.equal(errorOf(() => open(keys, id, 'request', relabelled)).reason, 'authentication_failed', 'relabelled key id');
  const stranger = new RecordKeys(randomBytes(32), new Map(), 30, () => 100 * 30 * DAY);
  t.equal(errorOf(() => open(stranger, id, 'request', envelope)).reason, 'authentication_failed', 'another master key');
  t.equal(errorOf(() => open(keys, id, 'request', 'not an envelope')).reason, 'malformed');
  t.equal(errorOf(() => open(keys, id, 'request', 'v1.m30d100.@@.x.y')).reason, 'malformed');
  const unknown = errorOf(() => open(keys, id, 'request', envelope.replace('.m30d100.', '.gone.')));
  t.equal(unknown.reason, 'key_unknown');
  t.match(unknown.message, /key gone, which this gateway no longer has/);
});

t.test('rotation: a later period seals under a new key id, older envelopes still open', async (t) => {
  let now = 100 * 7 * DAY;
  const keys = new RecordKeys(master, new Map(), 7, () => now);
  const before = seal(keys.current(), id, 'request', 'old');
  now += 7 * DAY;
  const after = seal(keys.current(), id, 'request', 'new');
  t.equal(envelopeKeyId(before), 'm7d100');
  t.equal(envelopeKeyId(after), 'm7d101');
  t.not(keys.get('m7d100')!.toString('hex'), keys.get('m7d101')!.toString('hex'), 'a distinct key per period');
  t.equal(open(keys, id, 'request', before), 'old');
  t.equal(open(keys, id, 'request', after), 'new');
  // Another replica with the same master derives the same keys without talking to this one.
  const replica = new RecordKeys(master, new Map(), 7, () => now);
  t.equal(open(replica, id, 'request', before), 'old');
  // The interval changed: records of the old interval still open (their id names it).
  const changed = new RecordKeys(master, new Map(), 30, () => now);
  t.equal(changed.current().id, `m30d${Math.floor(now / (30 * DAY))}`);
  t.equal(open(changed, id, 'request', before), 'old');
  t.equal(keys.anonymizationKey!.toString('hex'), changed.anonymizationKey!.toString('hex'), 'the anonymization key does not rotate');
});

t.test('a keyring: the first entry seals, every entry opens, a deleted entry destroys its records', async (t) => {
  const a = randomBytes(32);
  const b = randomBytes(32);
  const old = new RecordKeys(undefined, new Map([['a', a]]), 30);
  const sealedA = seal(old.current(), id, 'response', 'under a');
  const rotated = new RecordKeys(undefined, new Map([['b', b], ['a', a]]), 30);
  t.equal(rotated.current().id, 'b');
  t.equal(open(rotated, id, 'response', sealedA), 'under a');
  const sealedB = seal(rotated.current(), id, 'response', 'under b');
  const shredded = new RecordKeys(undefined, new Map([['b', b]]), 30);
  t.equal(errorOf(() => open(shredded, id, 'response', sealedA)).reason, 'key_unknown');
  t.equal(open(shredded, id, 'response', sealedB), 'under b');
  // With a master as well, the keyring writes and the master's periods still read.
  const both = new RecordKeys(master, new Map([['b', b]]), 30, () => 100 * 30 * DAY);
  const byMaster = seal(new RecordKeys(master, new Map(), 30, () => 100 * 30 * DAY).current(), id, 'request', 'm');
  t.equal(both.current().id, 'b');
  t.equal(open(both, id, 'request', byMaster), 'm');
  t.equal(both.anonymizationKey!.toString('hex'), new RecordKeys(master, new Map(), 30).anonymizationKey!.toString('hex'), 'anonymization follows the master, not the keyring');
  // A keyring alone gives no pseudonym key: shredding an entry must not change every pseudonym (review).
  t.equal(shredded.anonymizationKey, undefined);
  t.equal(new RecordKeys(undefined, new Map([['a', a], ['b', b]]), 30).anonymizationKey, undefined);
});

const settings = (over: Record<string, unknown> = {}) => ({ MODELGATE_ENCRYPTION_MASTER_KEY: undefined, MODELGATE_ENCRYPTION_KEYS: [], MODELGATE_KEY_ROTATION_INTERVAL: 30, ...over }) as never;

t.test('the embedded default creates a 0600 key file once, reuses it, and never overwrites it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-keys-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { logger, lines } = captureLogs();
  const first = loadRecordKeys({ settings: settings(), dataDir: dir, env: 'dev', required: true, logger })!;
  const file = join(dir, MASTER_KEY_FILE);
  t.equal(statSync(file).mode & 0o777, 0o600);
  t.match(readFileSync(file, 'utf8'), /^[A-Za-z0-9+/]{43}=\n$/);
  t.same(readdirSync(dir), [MASTER_KEY_FILE], 'no temporary file left behind');
  const warning = lines().find((line) => /master key was created/.test(String(line.msg)));
  t.ok(warning, 'a warning says a key was created');
  t.notMatch(JSON.stringify(lines()), readFileSync(file, 'utf8').trim(), 'the key itself is never logged');
  const envelope = seal(first.current(), id, 'request', 'kept');
  const again = loadRecordKeys({ settings: settings(), dataDir: dir, env: 'dev', required: true, logger: silent })!;
  t.equal(open(again, id, 'request', envelope), 'kept', 'a restart reuses the file');
  t.equal(again.anonymizationKey!.toString('hex'), first.anonymizationKey!.toString('hex'));
  writeFileSync(file, 'garbage\n');
  t.throws(() => loadRecordKeys({ settings: settings(), dataDir: dir, env: 'dev', required: true, logger: silent }), /does not hold a 32-byte base64 key; it is never overwritten/);
  t.equal(readFileSync(file, 'utf8'), 'garbage\n');
  // Records off: the bad file is ignored with a warning, not a refusal to start.
  t.equal(loadRecordKeys({ settings: settings(), dataDir: dir, env: 'dev', required: false, logger: silent }), undefined);
  t.equal(readFileSync(file, 'utf8'), 'garbage\n', 'still not overwritten');
});

t.test('in prod, records without a key stop the start; records off need no key', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-keys-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  t.throws(() => loadRecordKeys({ settings: settings(), dataDir: dir, env: 'prod', required: true, logger: silent }), ConfigError);
  t.throws(() => loadRecordKeys({ settings: settings(), dataDir: dir, env: 'prod', required: true, logger: silent }), /in prod set MODELGATE_ENCRYPTION_MASTER_KEY/);
  t.same(readdirSync(dir), [], 'no key file made in prod');
  t.equal(loadRecordKeys({ settings: settings(), dataDir: dir, env: 'prod', required: false, logger: silent }), undefined);
  const keys = loadRecordKeys({ settings: settings({ MODELGATE_ENCRYPTION_MASTER_KEY: master.toString('base64') }), dataDir: dir, env: 'prod', required: true, logger: silent });
  t.ok(keys);
  t.throws(
    () => loadRecordKeys({ settings: settings({ MODELGATE_ENCRYPTION_KEYS: [`a:${master.toString('base64')}`, `a:${master.toString('base64')}`] }), dataDir: dir, env: 'prod', required: true, logger: silent }),
    /the key id a appears twice/,
  );
});
