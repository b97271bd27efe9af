// MODELGATE_LOG_RETENTION: rotated log files (pino-roll's `<name>.<n>.log` beside MODELGATE_LOG_FILE)
// older than the retention are deleted, at start and hourly; so are files beyond
// MODELGATE_LOG_ROTATION_COUNT left by earlier runs (pino-roll counts only the files its own process
// rotated). It runs in every process that writes a log file, not under the store's sweeper lease:
// each replica's files are on its own disk. The file being written (the newest) is never deleted.
import { readdir, stat, unlink } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import type { Logger } from 'pino';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Names pino-roll gives the rotated files of `file`: `app.log` → `app.1.log`, `app.2026-11-26.3.log`. */
export function rotatedName(file: string): RegExp {
  const extension = extname(file) || '.log';
  const base = basename(file, extname(file));
  return new RegExp(`^${escape(base)}\\.(?:[0-9-]+\\.)?\\d+${escape(extension)}$`);
}

export class LogRetention {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly file: string,
    private readonly days: number,
    /** Rotated files kept besides the one written (MODELGATE_LOG_ROTATION_COUNT). */
    private readonly count: number,
    private readonly logger: Logger,
  ) {}

  start(intervalMs = HOUR_MS): void {
    const run = () => void this.sweep().catch((error: Error) => this.logger.warn({ err: error.message }, 'log retention: sweep failed; tried again next time'));
    run();
    this.timer = setInterval(run, intervalMs);
    this.timer.unref();
  }

  /** Deletes rotated files last written before `now` minus the retention, or beyond the count; answers their names. */
  async sweep(now = Date.now()): Promise<string[]> {
    const directory = dirname(this.file);
    const pattern = rotatedName(this.file);
    const names = (await readdir(directory).catch(() => [] as string[])).filter((name) => pattern.test(name));
    const files = await Promise.all(names.map(async (name) => ({ name, mtime: (await stat(join(directory, name)).catch(() => undefined))?.mtimeMs })));
    const dated = files.filter((file): file is { name: string; mtime: number } => file.mtime !== undefined).sort((a, b) => a.mtime - b.mtime);
    // The newest is the one being written.
    const rotated = dated.slice(0, -1);
    const excess = rotated.length - this.count;
    const expired = rotated.filter((file, i) => i < excess || file.mtime < now - this.days * DAY_MS);
    const deleted: string[] = [];
    for (const file of expired) {
      await unlink(join(directory, file.name)).then(
        () => deleted.push(file.name),
        (error: NodeJS.ErrnoException) => error.code === 'ENOENT' || this.logger.warn({ err: error.message, file: file.name }, 'log retention: could not delete a log file'),
      );
    }
    if (deleted.length > 0) this.logger.info({ files: deleted, days: this.days }, 'log retention: deleted log files past the retention');
    return deleted;
  }

  close(): void {
    clearInterval(this.timer);
  }
}
