// The gateway's entry point: validate the configuration (exit 1 naming every bad setting), open and
// migrate the database (exit 1 naming what failed), listen (exit 1 naming the port when it cannot),
// and shut down gracefully on SIGTERM/SIGINT (exit 0 once in-flight requests finished). With
// MODELGATE_WORKERS above one, this process does the first two once and supervises the workers
// (workers.ts), each of which runs this file again and serves.
// First: the heap settings apply before any other module runs (heap-tuning.ts).
import './heap-tuning.js';
import cluster from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { createApp, type AppOptions } from './app.js';
import { ConfigError } from './config.js';
import { ListenError } from './server.js';
import { StoreError } from './store/database.js';
import { MigrationError } from './store/migrate.js';
import { planStart } from './primary.js';
import { supervise } from './workers.js';

/** A wrong setting, a database that cannot be reached, a migration that failed: one line, exit 1. */
function stopOnStartError(error: unknown): never {
  if (error instanceof ConfigError || error instanceof StoreError || error instanceof MigrationError) {
    process.stderr.write(`modelgate: ${error.message}\n`);
    process.exit(1);
  }
  throw error;
}

async function serve(options: AppOptions, note?: string): Promise<void> {
  const app = await createApp(process.env, options).catch(stopOnStartError);
  if (note) app.logger.info(note);
  try {
    await app.listen();
  } catch (error) {
    if (!(error instanceof ListenError)) throw error;
    process.stderr.write(`modelgate: ${error.message}\n`);
    await app.close().catch(() => undefined);
    process.exit(1);
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.logger.info({ signal }, 'shutting down');
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

async function main(): Promise<void> {
  if (cluster.isWorker) return serve({ migrated: true });
  const plan = await planStart(process.env).catch(stopOnStartError);
  if (!('logger' in plan)) return serve({}, plan.reason);
  process.exit(await supervise({ ...plan, exec: fileURLToPath(import.meta.url) }));
}

main().catch((error: unknown) => {
  process.stderr.write(`modelgate: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
