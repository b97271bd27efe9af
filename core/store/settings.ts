// Settings of the durable store: which engine (SQLite under MODELGATE_DATA_DIR unless
// MODELGATE_DATABASE_URL names a PostgreSQL server), the PostgreSQL schema and pool, and how long
// the sweeper keeps ledger rows and usage rollups.
import { defineSettings, type SettingsOf } from '../settings.js';

export const storeSettings = defineSettings({
  MODELGATE_DATABASE_URL: {
    type: 'string',
    pattern: '^postgres(ql)?://',
    hint: 'be a postgres:// or postgresql:// URL',
    secret: true,
    example: 'postgres://modelgate:secret@db.internal:5432/modelgate',
    description:
      'PostgreSQL server shared by every replica (node-postgres pool). Unset: SQLite in MODELGATE_DATA_DIR/modelgate.db, for one instance. Holds what must survive: the spend ledger, usage rollups, alert firings and pauses.',
  },
  MODELGATE_DATABASE_SCHEMA: {
    type: 'string',
    default: 'public',
    pattern: '^[a-z_][a-z0-9_]{0,62}$',
    hint: 'be a lower-case SQL identifier (letters, digits and _, at most 63)',
    description: "PostgreSQL schema the gateway's tables live in (created if missing), so several gateways or environments can share one database.",
  },
  MODELGATE_DATABASE_POOL_SIZE: { type: 'integer', default: 10, minimum: 1, maximum: 1000, description: 'Connections each replica may open to PostgreSQL at most.' },
  MODELGATE_LEDGER_RETENTION: {
    type: 'integer',
    default: 60,
    minimum: 35,
    maximum: 36500,
    description:
      'Days raw ledger rows (one per settled request or billed failed call) are kept. At least 35, so the current month and ISO week can always be rebuilt from them; rollups keep the totals longer.',
  },
  MODELGATE_METRICS_RETENTION: {
    type: 'integer',
    default: 365,
    minimum: 35,
    maximum: 36500,
    description:
      'Days daily usage and cost rollups are kept. The spec gives 30 (monitoring) and 365 (data protection): daily rollups are small and a year serves budget reviews, so 365 is the default here, and the 30 days go to the hourly rollups (MODELGATE_METRICS_HOURLY_RETENTION).',
  },
  MODELGATE_METRICS_HOURLY_RETENTION: {
    type: 'integer',
    default: 30,
    minimum: 1,
    maximum: 36500,
    description: 'Days hourly usage rollups are kept (they are 24 times as many rows as the daily ones).',
  },
});

export type StoreSettings = SettingsOf<typeof storeSettings>;
