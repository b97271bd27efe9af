// `npm run migrate`: applies the database migrations without starting the server (the same ones,
// under the same lock, as a start applies), then exits: 0 when the schema is current, 1 naming the
// migration that failed or the setting that is wrong.
import { pino } from 'pino';
import { loadConfig, ConfigError } from '../config.js';
import { serverSettings } from '../server-settings.js';
import { storeSettings, type StoreSettings } from './settings.js';
import { openStore, StoreError } from './database.js';
import { migrate, MigrationError } from './migrate.js';
import { MIGRATIONS } from './migrations/index.js';

const logger = pino({ level: process.env.MODELGATE_LOG_LEVEL ?? 'info' });

try {
  const { values } = loadConfig(process.env, [serverSettings, storeSettings]);
  const store = await openStore(values as StoreSettings & { MODELGATE_DATA_DIR: string }, logger);
  try {
    const report = await migrate(store, MIGRATIONS, logger);
    logger.info({ database: store.location, applied: report.applied, current: MIGRATIONS.length }, report.applied.length > 0 ? 'database migrated' : 'database already current');
  } finally {
    await store.close();
  }
} catch (error) {
  if (error instanceof ConfigError || error instanceof StoreError || error instanceof MigrationError) {
    process.stderr.write(`modelgate: ${error.message}\n`);
    process.exit(1);
  }
  throw error;
}
