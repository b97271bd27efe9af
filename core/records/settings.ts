// Settings of request records and of how they are protected: whether records are kept, for how
// long, how big a body may be, the encryption of their bodies (AES-256-GCM, the key material and
// its rotation) and the anonymization of what they hold (core/anonymize.ts). docs/security.md
// describes the envelope, the keys and what is anonymized.
import { defineSettings, type SettingsOf } from '../settings.js';

/** One keyring entry: `id:` + a 256-bit key in base64 (44 characters). */
const KEYRING_ENTRY = '^[A-Za-z][A-Za-z0-9_-]{0,31}:[A-Za-z0-9+/]{43}=$';

export const recordSettings = defineSettings({
  MODELGATE_REQUEST_RECORDS: {
    type: 'boolean',
    default: false,
    description:
      'Keep a record of each chat, Responses and embeddings request (metadata, request body, response body) for audit, debugging and A/B evaluation, readable at GET /v1/admin/requests. Off by default: records hold what users wrote. Written in batches after the response ended, never on the request path.',
  },
  MODELGATE_REQUEST_RECORDS_MAX_BODY: {
    type: 'integer',
    default: 1_048_576,
    minimum: 1024,
    maximum: 16_777_216,
    description: 'Bytes of a request or response body a record keeps (each, before encryption); a longer body is cut there and the record says so (`truncated`).',
  },
  MODELGATE_REQUEST_RECORDS_BACKLOG: {
    type: 'integer',
    default: 2000,
    minimum: 10,
    maximum: 1_000_000,
    description: 'Records that may wait in memory to be written (also at most 64 MB of bodies); past it new records are dropped, counted and warned about — records are not money.',
  },
  MODELGATE_REQUEST_RETENTION: { type: 'integer', default: 30, minimum: 1, maximum: 36500, description: 'Days request records are kept; the retention sweeper deletes older ones.' },
  MODELGATE_ENCRYPTION_ENABLED: {
    type: 'boolean',
    default: true,
    variants: ['prod'],
    description: 'Encrypt the bodies and error messages of request records (AES-256-GCM); their metadata (ids, model, status, tokens, times) stays queryable.',
  },
  MODELGATE_ENCRYPTION_ALGORITHM: {
    type: 'string',
    enum: ['AES-256-GCM'],
    default: 'AES-256-GCM',
    description: 'Cipher of request records. AES-256-GCM is the only one: any other value stops the start.',
  },
  MODELGATE_ENCRYPTION_MASTER_KEY: {
    type: 'string',
    secret: true,
    pattern: '^[A-Za-z0-9+/]{43}=$',
    hint: 'be 32 random bytes in base64 (44 characters; `openssl rand -base64 32`)',
    description:
      'Master key (256 bits, base64) the record keys are derived from (HKDF-SHA256, one per rotation period) and the anonymization key. Unset and no keyring: MODELGATE_DATA_DIR/encryption-master.key is created (mode 0600) and used, with a warning; in prod a missing key stops the start when records are on.',
  },
  MODELGATE_ENCRYPTION_KEYS: {
    type: 'array',
    default: [],
    secret: true,
    items: { type: 'string', pattern: KEYRING_ENTRY },
    hint: 'be `id:base64key` entries, comma-separated: id a letter then up to 31 of A-Z a-z 0-9 _ -, the key 32 bytes in base64',
    example: '2026b:<base64 key>,2026a:<base64 key>',
    description:
      'Keyring of explicit record keys, `id:base64key` comma-separated (id: a letter, then up to 31 of A-Z a-z 0-9 _ -). The first entry encrypts new records; every entry decrypts. Deleting an entry destroys the records under it (crypto-shredding). Takes precedence over the master key for writing.',
  },
  MODELGATE_KEY_ROTATION_INTERVAL: {
    type: 'integer',
    default: 30,
    minimum: 1,
    maximum: 3650,
    description: 'Days a record key derived from the master key encrypts new records; then the next period\'s key does (every replica agrees without coordination). Old keys keep decrypting.',
  },
  MODELGATE_ANONYMIZATION_ENABLED: {
    type: 'boolean',
    default: true,
    description: 'Replace user identifiers, e-mail addresses and phone numbers by keyed pseudonyms (core/anonymize.ts) in stored records (before they are encrypted), log lines and the error messages analytics keep. What is forwarded is unchanged unless MODELGATE_ANONYMIZE_UPSTREAM is on.',
  },
  MODELGATE_ANONYMIZATION_FIELDS: {
    type: 'array',
    default: [],
    items: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
    hint: 'be field names (letters, digits, _ and -; a name, not a path: it matches at any depth)',
    description: 'Object keys whose values are pseudonymized wherever they occur in a body (names, not paths: user_id matches metadata.user_id); empty: user_id, email, phone. The OpenAI `user` and `safety_identifier` always are.',
  },
});

export type RecordSettings = SettingsOf<typeof recordSettings>;
