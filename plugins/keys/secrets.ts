// Key secrets: `uc_` + 32 random bytes in base64url (43 characters), shown once and stored only as
// HMAC-SHA256(pepper, secret). A token of any other shape cannot be one of ours and is refused
// without a lookup. The pepper also encrypts (AES-256-GCM) the one thing kept that could give a
// secret back: a regenerate's answer for its Idempotency-Key, for a few minutes.
import { createHmac, randomBytes } from 'node:crypto';
import { IV_BYTES, TAG_BYTES, openGcm, sealGcm } from '../../core/aes-gcm.js';

const SECRET_BYTES = 32;
/** Exactly the shape generateSecret makes: `uc_` + 43 base64url characters. */
export const SECRET_SHAPE = /^uc_[A-Za-z0-9_-]{43}$/;
/** `uc_` + this many characters of the random part are shown to humans (48 of the 256 bits). */
const PREFIX_CHARS = 8;

export function generateSecret(): string {
  return `uc_${randomBytes(SECRET_BYTES).toString('base64url')}`;
}

export function prefixOf(secret: string): string {
  return secret.slice(0, 3 + PREFIX_CHARS);
}

export function newKeyId(): string {
  return `key_${randomBytes(12).toString('base64url')}`;
}

/** What the pepper is used for: the hash of a secret, and sealing a secret for a short while. */
export class Pepper {
  private readonly sealKey: Buffer;

  constructor(private readonly pepper: string) {
    this.sealKey = createHmac('sha256', pepper).update('modelgate idempotent answers').digest();
  }

  hash(secret: string): string {
    return createHmac('sha256', this.pepper).update(secret).digest('hex');
  }

  seal(secret: string): string {
    const { iv, ciphertext, tag } = sealGcm(this.sealKey, Buffer.from(secret, 'utf8'));
    return Buffer.concat([iv, tag, ciphertext]).toString('base64url');
  }

  /** The sealed secret, or undefined when it was sealed under another pepper (or altered). */
  open(sealed: string): string | undefined {
    try {
      const raw = Buffer.from(sealed, 'base64url');
      const tagEnd = IV_BYTES + TAG_BYTES;
      return openGcm(this.sealKey, { iv: raw.subarray(0, IV_BYTES), tag: raw.subarray(IV_BYTES, tagEnd), ciphertext: raw.subarray(tagEnd) }).toString('utf8');
    } catch {
      return undefined;
    }
  }
}

/** The pepper in force: MODELGATE_API_KEY_PEPPER, else one derived from the bootstrap key. */
export function pepperFrom(explicit: string | undefined, bootstrapKey: string): string {
  return explicit ?? createHmac('sha256', bootstrapKey).update('modelgate api key pepper').digest('base64url');
}
