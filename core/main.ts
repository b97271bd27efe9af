// The gateway's entry point: validate the configuration (exit 1 naming every bad setting), open and
// migrate the database (exit 1 naming what failed), listen (exit 1 naming the port when it cannot),
// and shut down gracefully on SIGTERM/SIGINT (exit 0 once in-flight requests finished).
import { createApp } from './app.js';
import { ConfigError } from './config.js';
import { ListenError } from './server.js';
import { StoreError } from './store/database.js';
import { MigrationError } from './store/migrate.js';

async function main(): Promise<void> {
  let app;
  try {
    app = await createApp(process.env);
  } catch (error) {
    // A wrong setting, a database that cannot be reached, a migration that failed: one line, exit 1.
    if (error instanceof ConfigError || error instanceof StoreError || error instanceof MigrationError) {
      process.stderr.write(`modelgate: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
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

main().catch((error: unknown) => {
  process.stderr.write(`modelgate: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
