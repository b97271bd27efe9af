// The envelope a request record's encrypted field is stored in, one self-describing string:
//
//   v1.<key id>.<IV>.<ciphertext>.<tag>        (IV 96 bits, tag 128 bits; the last three base64url)
//
// AES-256-GCM under the key the id names (keyring.ts). The additional authenticated data is
// `modelgate-record:v1:<key id>:<record id>:<field>`: a ciphertext copied to another record, or to
// another field of the same record, or relabelled with another key id, fails to decrypt.
import { openGcm, sealGcm } from '../aes-gcm.js';
import type { RecordKeys } from './keyring.js';

const VERSION = 'v1';
const B64URL = /^[A-Za-z0-9_-]*$/;

/** Why a field could not be decrypted, in words an operator can act on. */
export class EnvelopeError extends Error {
  override name = 'EnvelopeError';
  constructor(
    readonly reason: 'malformed' | 'key_unknown' | 'authentication_failed',
    message: string,
  ) {
    super(message);
  }
}

export type RecordField = 'request' | 'response' | 'error';

const aad = (keyId: string, recordId: string, field: RecordField) => Buffer.from(`modelgate-record:${VERSION}:${keyId}:${recordId}:${field}`, 'utf8');

/** `plaintext` sealed for `field` of `recordId` under `current` (RecordKeys.current(): taken once per record). */
export function seal(current: { id: string; key: Buffer }, recordId: string, field: RecordField, plaintext: string): string {
  const { id, key } = current;
  const { iv, ciphertext, tag } = sealGcm(key, Buffer.from(plaintext, 'utf8'), aad(id, recordId, field));
  return [VERSION, id, iv.toString('base64url'), ciphertext.toString('base64url'), tag.toString('base64url')].join('.');
}

/** The key id an envelope names, or undefined when it is not an envelope. */
export function envelopeKeyId(envelope: string): string | undefined {
  const parts = envelope.split('.');
  return parts.length === 5 && parts[0] === VERSION ? parts[1] : undefined;
}

/** The plaintext of `envelope`, sealed for `field` of `recordId`; EnvelopeError otherwise. */
export function open(keys: RecordKeys, recordId: string, field: RecordField, envelope: string): string {
  const parts = envelope.split('.');
  if (parts.length !== 5 || parts[0] !== VERSION || !parts.slice(2).every((part) => B64URL.test(part))) {
    throw new EnvelopeError('malformed', `the ${field} field is not a ${VERSION} envelope`);
  }
  const [, keyId, iv, ciphertext, tag] = parts as [string, string, string, string, string];
  const key = keys.get(keyId);
  if (!key) throw new EnvelopeError('key_unknown', `the ${field} field was encrypted with key ${keyId}, which this gateway no longer has (destroyed, or not configured)`);
  try {
    const plain = openGcm(key, { iv: Buffer.from(iv, 'base64url'), ciphertext: Buffer.from(ciphertext, 'base64url'), tag: Buffer.from(tag, 'base64url') }, aad(keyId, recordId, field));
    return plain.toString('utf8');
  } catch {
    throw new EnvelopeError('authentication_failed', `the ${field} field does not decrypt with key ${keyId}: it was altered, belongs to another record, or the key is not the one it was sealed with`);
  }
}
