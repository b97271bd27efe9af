// Standard Webhooks signatures (webhook-id, webhook-timestamp, webhook-signature), made by the
// `standardwebhooks` package so receivers can verify with any Standard Webhooks library. Several
// secrets sign at once while one is rotated: receivers still holding the old secret keep verifying.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

const WHSEC_PREFIX = 'whsec_';

export class Signer {
  readonly #signers: Webhook[];

  /** `secrets[0]` is the current secret; the rest are previous ones still honoured. */
  constructor(secrets: string[]) {
    if (secrets.length === 0) throw new Error('A webhook signer needs at least one secret');
    this.#signers = secrets.map(webhookFor);
  }

  /** `at` is the timestamp signed and sent (whole seconds); receivers refuse it 5 min off. */
  headers(msgId: string, body: string, at: Date): SignatureHeaders {
    return {
      'webhook-id': msgId,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': this.#signers.map((signer) => signer.sign(msgId, at, body)).join(' '),
    };
  }
}

// A whsec_ secret is base64 after the prefix, the form Standard Webhooks tools generate. Any other
// string is the key itself, as its UTF-8 bytes: the library's own raw-string form would take char
// codes, which differs from UTF-8 for non-ASCII secrets. Errors never quote the secret.
function webhookFor(secret: string): Webhook {
  if (!secret.startsWith(WHSEC_PREFIX)) {
    if (secret.length === 0) throw new Error('A webhook secret must not be empty');
    return new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });
  }
  try {
    return new Webhook(secret);
  } catch {
    throw new Error('A whsec_ webhook secret must be non-empty base64 after the prefix');
  }
}

/** The bytes of HMAC key a secret gives (throws, without quoting it, for a malformed whsec_ secret). */
export function keyBytes(secret: string): number {
  webhookFor(secret);
  return secret.startsWith(WHSEC_PREFIX) ? Buffer.from(secret.slice(WHSEC_PREFIX.length), 'base64').length : Buffer.byteLength(secret, 'utf8');
}

/** A new webhook-id: `msg_` and 24 hex characters (96 random bits). Retries reuse the id. */
export function newMessageId(): string {
  return `msg_${randomBytes(12).toString('hex')}`;
}
