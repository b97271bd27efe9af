// MODELGATE_WORKERS above one: this (primary) process validates the settings, migrates the database
// once, then forks the workers, each a whole gateway sharing the port (node:cluster hands them
// connections in turn). A worker that dies while starting stops the start (exit 1, its message
// said once however many workers said it); one that dies later is replaced, after a growing pause,
// until too many die within a minute. SIGTERM/SIGINT reach every worker, which finish their
// in-flight requests as a single process does; the primary exits 0 once all did.
import cluster, { type Worker } from 'node:cluster';
import { createInterface } from 'node:readline';
import type { Logger } from 'pino';
import { mergeWorkerMetrics } from './worker-metrics.js';

export interface SupervisorOptions {
  count: number;
  /** The script every worker runs: this build's core/main.js, even if dist/ moves meanwhile. */
  exec: string;
  logger: Logger;
  /** MODELGATE_SHUTDOWN_TIMEOUT: the workers' own bound on finishing in-flight requests. */
  shutdownTimeoutMs: number;
}

/** More unexpected exits than this within CRASH_WINDOW_MS: the workers are stopped, exit 1. */
const CRASH_LIMIT = 5;
const CRASH_WINDOW_MS = 60_000;
const FIRST_PAUSE_MS = 250;
const LONGEST_PAUSE_MS = 10_000;
/** Past the workers' shutdown bound, those still running are killed. */
const SHUTDOWN_MARGIN_MS = 5_000;

type Phase = 'starting' | 'running' | 'stopping';

/** Runs the workers until a signal stops them or they cannot run; resolves with the exit status. */
export function supervise({ count, exec, logger, shutdownTimeoutMs }: SupervisorOptions): Promise<number> {
  // stderr through here, so a message every worker prints alike (a port taken) is said once.
  cluster.setupPrimary({ exec, args: [], stdio: ['ignore', 'inherit', 'pipe', 'ipc'] });
  return new Promise((resolve) => {
    let phase: Phase = 'starting';
    let status = 0;
    /** The signal the workers were asked to stop with: one still starting ends by it, which is no failure. */
    let stopSignal: NodeJS.Signals | undefined;
    const live = new Set<Worker>();
    const listening = new Set<Worker>();
    const crashes: number[] = [];
    const said = new Set<string>();

    const fork = () => {
      const worker = cluster.fork();
      live.add(worker);
      createInterface({ input: worker.process.stderr! }).on('line', (line) => {
        // Only while starting or stopping: a long run would otherwise keep every line it ever wrote.
        if (phase !== 'running') {
          if (said.has(line)) return;
          said.add(line);
        }
        process.stderr.write(`${line}\n`);
      });
      worker.once('listening', () => {
        listening.add(worker);
        if (phase === 'starting' && listening.size === count) {
          phase = 'running';
          logger.info({ workers: count, pids: [...live].map((w) => w.process.pid) }, 'workers listening');
        }
      });
      // 'close', not 'exit': its stderr has been read to the end by then.
      worker.process.once('close', (code: number | null, signal: NodeJS.Signals | null) => ended(worker, code, signal));
    };

    const stop = (failed: boolean, signal: NodeJS.Signals = 'SIGTERM') => {
      if (failed) status = 1;
      if (phase === 'stopping') return;
      phase = 'stopping';
      stopSignal = signal;
      for (const worker of live) worker.process.kill(signal);
      if (live.size === 0) resolve(status);
      setTimeout(() => {
        if (live.size > 0) status = 1;
        for (const worker of live) worker.process.kill('SIGKILL');
      }, shutdownTimeoutMs + SHUTDOWN_MARGIN_MS).unref();
    };

    const ended = (worker: Worker, code: number | null, signal: NodeJS.Signals | null) => {
      live.delete(worker);
      listening.delete(worker);
      const how = signal ? `signal ${signal}` : `status ${code}`;
      if (phase === 'stopping') {
        if (code !== 0 && signal !== stopSignal) status = 1;
        if (live.size === 0) resolve(status);
        return;
      }
      if (phase === 'starting') {
        process.stderr.write(`modelgate: worker ${worker.id} exited (${how}) while starting; stopping the others\n`);
        stop(true);
        return;
      }
      const now = Date.now();
      crashes.push(now);
      while (crashes[0]! <= now - CRASH_WINDOW_MS) crashes.shift();
      if (crashes.length > CRASH_LIMIT) {
        logger.error({ worker: worker.id, code, signal, exits: crashes.length }, 'workers keep exiting; stopping');
        process.stderr.write(`modelgate: workers exited ${crashes.length} times within a minute (the last: worker ${worker.id}, ${how}); stopping\n`);
        stop(true);
        return;
      }
      const pause = Math.min(LONGEST_PAUSE_MS, FIRST_PAUSE_MS * 2 ** (crashes.length - 1));
      logger.error({ worker: worker.id, pid: worker.process.pid, code, signal, restartInMs: pause }, 'a worker exited unexpectedly; starting another');
      setTimeout(() => {
        if (phase !== 'stopping') fork();
      }, pause);
    };

    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.on(signal, () => {
        if (phase !== 'stopping') logger.info({ signal, workers: live.size }, 'shutting down: every worker finishes its in-flight requests');
        stop(false, signal);
      });
    }
    // A scrape of /metrics answers for every worker that listens, not only the one it reached.
    mergeWorkerMetrics(() => listening);
    for (let i = 0; i < count; i++) fork();
  });
}
