// AES-256-GCM, the one cipher the gateway stores anything under (node:crypto): a fresh random
// 96-bit IV per message, the 128-bit tag checked on open. Used by the keys plugin's sealed
// idempotent answers and by the envelope of request records (core/records/envelope.ts).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export const IV_BYTES = 12;
export const TAG_BYTES = 16;
export const KEY_BYTES = 32;

export interface Sealed {
  iv: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

/** `plaintext` under `key` (32 bytes), `aad` authenticated but not encrypted. */
export function sealGcm(key: Buffer, plaintext: Buffer, aad?: Buffer): Sealed {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  if (aad) cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, ciphertext, tag: cipher.getAuthTag() };
}

/** The plaintext; throws when the key, the AAD, the IV, the ciphertext or the tag is not the one sealed. */
export function openGcm(key: Buffer, sealed: Sealed, aad?: Buffer): Buffer {
  if (sealed.iv.length !== IV_BYTES || sealed.tag.length !== TAG_BYTES) throw new Error('malformed: wrong IV or tag length');
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.iv, { authTagLength: TAG_BYTES });
  if (aad) decipher.setAAD(aad);
  decipher.setAuthTag(sealed.tag);
  return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
}
