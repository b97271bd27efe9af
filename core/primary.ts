// What the process `npm start` runs decides before serving: how many workers (MODELGATE_WORKERS),
// and with more than one, that the state they must share is in Redis (else ConfigError naming the
// settings) and that the database is migrated — here, once, before any worker starts.
import { allSettings, loadAppConfig } from './app.js';
import { ConfigError } from './config.js';
import { createLogger, type LoggingSettings } from './logger.js';
import { rememberSecrets } from './redact.js';
import { openStore } from './store/database.js';
import { migrate } from './store/migrate.js';
import { MIGRATIONS } from './store/migrations/index.js';
import type { StoreSettings } from './store/settings.js';
import { planWorkers, sharingProblems, type WorkerSettings } from './worker-count.js';
import type { Logger } from 'pino';

export type StartPlan =
  | { count: 1; /** Why `auto` chose one worker on a machine with more cores. */ reason?: string }
  | { count: number; logger: Logger; shutdownTimeoutMs: number };

export async function planStart(env: NodeJS.ProcessEnv): Promise<StartPlan> {
  const { values } = loadAppConfig(env);
  const settings = values as unknown as WorkerSettings;
  const plan = planWorkers(settings);
  if (plan.count === 1) return { count: 1, reason: plan.reason };
  const problems = sharingProblems(settings, plan.count);
  if (problems.length > 0) throw new ConfigError(problems);

  rememberSecrets(allSettings(), values);
  const logger = createLogger(values as LoggingSettings);
  const store = await openStore(values as StoreSettings & { MODELGATE_DATA_DIR: string }, logger);
  try {
    await migrate(store, MIGRATIONS, logger);
  } finally {
    await store.close();
  }
  logger.info({ workers: plan.count, database: store.location }, 'database ready; starting the workers');
  if (store.engine === 'sqlite') {
    logger.warn(
      { database: store.location },
      'the workers share the embedded SQLite database, but replicas on other machines would each keep their own ledger (usage reports, and budgets rebuilt after a Redis loss, would see only one machine). Set MODELGATE_DATABASE_URL to run on more than one.',
    );
  }
  return { count: plan.count, logger, shutdownTimeoutMs: values.MODELGATE_SHUTDOWN_TIMEOUT as number };
}
