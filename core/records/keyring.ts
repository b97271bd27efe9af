// The keys of request records. Two sources, usable together:
//   - a master key (MODELGATE_ENCRYPTION_MASTER_KEY, or the file MODELGATE_DATA_DIR/encryption-master.key
//     the embedded default creates): record keys are derived from it, HKDF-SHA256 with the info
//     `modelgate records <interval>d <period>`, one per MODELGATE_KEY_ROTATION_INTERVAL days. The key
//     id is `m<interval>d<period>` (`m30d683`): every replica derives the same key for the same
//     period with no coordination, and a record stays readable after the interval changes (the id
//     says which interval it was made under).
//   - a keyring (MODELGATE_ENCRYPTION_KEYS, `id:base64key,…`): the first entry encrypts, every entry
//     decrypts. Deleting an entry destroys its records for good, backups included (crypto-shredding),
//     which a derived key cannot offer: whoever holds the master can derive every period again.
// The anonymization key (HMAC of pseudonyms) is derived from the master (info `modelgate
// anonymization`), else from the keyring's LAST entry: it never changes when record keys rotate.
import { createHash, hkdfSync, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { ConfigError } from '../config.js';
import { KEY_BYTES } from '../aes-gcm.js';
import type { Environment } from '../settings.js';
import type { RecordSettings } from './settings.js';

const DAY_MS = 86_400_000;
export const MASTER_KEY_FILE = 'encryption-master.key';
const DERIVED_ID = /^m(\d{1,4})d(\d{1,9})$/;

function hkdf(key: Buffer, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), info, KEY_BYTES));
}

export class RecordKeys {
  private readonly derived = new Map<string, Buffer>();
  /**
   * The pseudonyms' key, from the master key; undefined with a keyring alone (the caller derives
   * it from the bootstrap key then): keyring entries come and go (shredding), pseudonyms must not.
   */
  readonly anonymizationKey: Buffer | undefined;

  constructor(
    private readonly master: Buffer | undefined,
    /** Keyring entries in their written order: the first encrypts. */
    private readonly keyring: ReadonlyMap<string, Buffer>,
    private readonly intervalDays: number,
    /** The clock the rotation period is read from (tests move it). */
    private readonly now: () => number = Date.now,
  ) {
    if (!master && keyring.size === 0) throw new Error('RecordKeys needs a master key or a keyring entry');
    this.anonymizationKey = master ? hkdf(master, 'modelgate anonymization') : undefined;
  }

  /** The key new records are encrypted with: the keyring's first entry, else this period's derived key. */
  current(): { id: string; key: Buffer } {
    const first = this.keyring.entries().next();
    if (!first.done) return { id: first.value[0], key: first.value[1] };
    const id = `m${this.intervalDays}d${Math.floor(this.now() / (this.intervalDays * DAY_MS))}`;
    return { id, key: this.get(id)! };
  }

  /** The key `id` names, or undefined when it is gone (a deleted keyring entry, a master no longer set). */
  get(id: string): Buffer | undefined {
    const entry = this.keyring.get(id);
    if (entry) return entry;
    const match = DERIVED_ID.exec(id);
    if (!match || !this.master) return undefined;
    let key = this.derived.get(id);
    if (!key) {
      key = hkdf(this.master, `modelgate records ${Number(match[1])}d ${Number(match[2])}`);
      // Bounded: a handful of periods are read at a time; a long scan of old records refills it.
      if (this.derived.size >= 64) this.derived.clear();
      this.derived.set(id, key);
    }
    return key;
  }
}

export interface KeySource {
  settings: Pick<RecordSettings, 'MODELGATE_ENCRYPTION_MASTER_KEY' | 'MODELGATE_ENCRYPTION_KEYS' | 'MODELGATE_KEY_ROTATION_INTERVAL'>;
  dataDir: string;
  env: Environment;
  /** Something stores records: a missing key in prod then stops the start, elsewhere the key file is created. */
  required: boolean;
  logger: Logger;
  now?: () => number;
}

/**
 * The record keys from the settings, the key file, or a new key file (dev, staging). Undefined when
 * no key is configured and none is required (records off): the caller then uses a key of the
 * process's own for pseudonyms in logs.
 */
export function loadRecordKeys(source: KeySource): RecordKeys | undefined {
  const { settings } = source;
  const keyring = new Map<string, Buffer>();
  for (const entry of settings.MODELGATE_ENCRYPTION_KEYS) {
    const cut = entry.indexOf(':');
    const id = entry.slice(0, cut);
    if (keyring.has(id)) throw new ConfigError([`MODELGATE_ENCRYPTION_KEYS: the key id ${id} appears twice`]);
    keyring.set(id, Buffer.from(entry.slice(cut + 1), 'base64'));
  }
  let master: Buffer | undefined = settings.MODELGATE_ENCRYPTION_MASTER_KEY === undefined ? undefined : Buffer.from(settings.MODELGATE_ENCRYPTION_MASTER_KEY, 'base64');
  if (!master) {
    const file = join(resolve(source.dataDir), MASTER_KEY_FILE);
    try {
      master = readKeyFile(file, source.logger);
    } catch (error) {
      // Records off: a bad file is not worth refusing to start over (the anonymizer gets a key of its own).
      if (source.required) throw error;
      source.logger.warn({ err: (error as Error).message }, 'the encryption key file is unusable and records are off: ignored');
    }
    if (!master && keyring.size === 0 && source.required) {
      if (source.env === 'prod') {
        throw new ConfigError([
          'MODELGATE_ENCRYPTION_MASTER_KEY: request records are on (MODELGATE_REQUEST_RECORDS) and no key is configured; in prod set MODELGATE_ENCRYPTION_MASTER_KEY (`openssl rand -base64 32`) or MODELGATE_ENCRYPTION_KEYS, kept apart from the database',
        ]);
      }
      master = createKeyFile(file, source.logger);
    }
  }
  if (!master && keyring.size === 0) return undefined;
  return new RecordKeys(master, keyring, settings.MODELGATE_KEY_ROTATION_INTERVAL, source.now);
}

/** The key in `file`, or undefined when there is none; a file that holds no key stops the start (never overwritten). */
export function readKeyFile(file: string, logger: Logger): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError([`MODELGATE_ENCRYPTION_MASTER_KEY: the key file ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`]);
  }
  const key = Buffer.from(text.trim(), 'base64');
  if (!/^[A-Za-z0-9+/]{43}=$/.test(text.trim()) || key.length !== KEY_BYTES) {
    throw new ConfigError([`MODELGATE_ENCRYPTION_MASTER_KEY: the key file ${file} does not hold a 32-byte base64 key; it is never overwritten — restore it, or move it away to start with a new key (records under the old one become unreadable)`]);
  }
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0) logger.warn({ file, mode: mode.toString(8) }, 'the encryption key file is readable by others than its owner: chmod 600 it');
  return key;
}

/**
 * Writes a new random key to `file`, atomically and never over an existing one: the key goes to a
 * temporary file (0600, synced) that is then hard-linked to the name, which fails if the name
 * exists (another process won the race: its key is used).
 */
export function createKeyFile(file: string, logger: Logger): Buffer {
  const dir = resolve(file, '..');
  mkdirSync(dir, { recursive: true });
  const temporary = join(dir, `.${MASTER_KEY_FILE}.${process.pid}.${randomBytes(4).toString('hex')}`);
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(fd, `${randomBytes(KEY_BYTES).toString('base64')}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(temporary);
  }
  const key = readKeyFile(file, logger)!;
  logger.warn(
    { file, fingerprint: fingerprint(key) },
    'request records: no encryption key configured, so a master key was created in the data directory; set MODELGATE_ENCRYPTION_MASTER_KEY (kept apart from the database and its backups) for real use',
  );
  return key;
}

/** 8 hex digits of SHA-256 of a key: tells keys apart in a log line without revealing them. */
export function fingerprint(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}
