// Request records, assembled: the data-protection material (record keys and the shared Anonymizer)
// and, when MODELGATE_REQUEST_RECORDS is on, the observer that captures each finished request, the
// writer that stores them, and the admin routes that read them. With records off, no observer is
// registered: the request path does no work for them at all.
import { hkdfSync } from 'node:crypto';
import type { Logger } from 'pino';
import { Anonymizer } from '../anonymize.js';
import type { Environment } from '../settings.js';
import type { Store } from '../store/database.js';
import type { Plugin, Route } from '../pipeline.js';
import { loadRecordKeys, type RecordKeys } from './keyring.js';
import type { RecordSettings } from './settings.js';
import { capture } from './capture.js';
import { RecordWriter } from './writer.js';
import { RecordReader } from './reader.js';
import { recordRoutes } from './routes.js';

const FLUSH_MS = 1000;

export interface DataProtection {
  /** Undefined when no key is configured and none was needed (records off). */
  keys: RecordKeys | undefined;
  /**
   * The one Anonymizer of the process (records, and logging when it anonymizes): its HMAC key
   * comes from the key material (keyring.ts), so pseudonyms are the same on every replica and
   * after restarts. Without key material (records off, no key set) its key is derived from the
   * bootstrap key (MODELGATE_API_KEY), which every replica shares: pseudonyms change only when
   * that key does.
   */
  anonymizer: Anonymizer;
}

export function dataProtection(settings: RecordSettings, where: { dataDir: string; env: Environment | undefined; logger: Logger; bootstrapKey: string; now?: () => number }): DataProtection {
  const keys = loadRecordKeys({
    settings,
    dataDir: where.dataDir,
    env: where.env ?? 'dev',
    required: settings.MODELGATE_REQUEST_RECORDS,
    logger: where.logger,
    now: where.now,
  });
  const anonymizer = new Anonymizer({
    enabled: settings.MODELGATE_ANONYMIZATION_ENABLED,
    fields: settings.MODELGATE_ANONYMIZATION_FIELDS,
    key: keys?.anonymizationKey ?? Buffer.from(hkdfSync('sha256', where.bootstrapKey, Buffer.alloc(0), 'modelgate anonymization', 32)),
  });
  return { keys, anonymizer };
}

export class RequestRecords {
  readonly writer: RecordWriter | undefined;
  readonly routes: Route[];
  /** Registered with the server's observers only when records are on. */
  readonly observer: Plugin | undefined;

  constructor(store: Store, logger: Logger, settings: RecordSettings, protection: DataProtection) {
    // The admin routes read whatever records exist, even with recording now off.
    this.routes = recordRoutes(new RecordReader(store, protection.keys), protection.anonymizer);
    if (!settings.MODELGATE_REQUEST_RECORDS) return;
    const writer = new RecordWriter(store, logger, {
      flushMs: FLUSH_MS,
      maxBacklog: settings.MODELGATE_REQUEST_RECORDS_BACKLOG,
      maxBodyBytes: settings.MODELGATE_REQUEST_RECORDS_MAX_BODY,
      anonymizer: protection.anonymizer,
      keys: settings.MODELGATE_ENCRYPTION_ENABLED ? protection.keys : undefined,
    });
    this.writer = writer;
    this.observer = {
      name: 'request-records',
      observe(ctx) {
        const record = capture(ctx);
        if (record) writer.add(record);
      },
    };
    if (!settings.MODELGATE_ENCRYPTION_ENABLED) logger.warn('request records are stored unencrypted (MODELGATE_ENCRYPTION_ENABLED=false)');
  }

  async close(): Promise<void> {
    await this.writer?.close();
  }
}
