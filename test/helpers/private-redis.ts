// A redis-server of the test's own on a free port, for tests that stop or freeze Redis mid-run.
// The shared Redis on 6379 is never touched: other test files use it at the same time.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { answersPing } from './redis.js';

export interface PrivateRedis {
  port: number;
  /** With `persist`: kills the server (SIGKILL) and starts it again from its last snapshot (SAVE). */
  restart(): Promise<void>;
  /** SIGSTOP: the server keeps its sockets open and answers nothing (a hung Redis). */
  pause(): void;
  resume(): void;
  /** Ends the server: connections are refused. */
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/**
 * `persist`: snapshots go to a directory of its own (written by SAVE only), and a restart loads the
 * last one. `password`: clients must AUTH with it (requirepass), for tests that watch where it goes.
 */
export async function startPrivateRedis(options: { persist?: boolean; password?: string } = {}): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = options.persist ? mkdtempSync(join(tmpdir(), 'modelgate-redis-')) : undefined;
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...(dir ? ['--dir', dir] : []), ...(options.password ? ['--requirepass', options.password] : [])];
  let child: ChildProcess;
  let exited: Promise<void>;
  const launch = async () => {
    child = spawn('redis-server', args, { stdio: 'ignore' });
    exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    for (let i = 0; i < 100 && !(await answersPing(port, options.password)); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    if (!(await answersPing(port, options.password))) throw new Error(`private redis-server on ${port} did not answer`);
  };
  await launch();
  return {
    port,
    async restart() {
      child.kill('SIGKILL');
      await exited;
      await launch();
    },
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    async stop() {
      if (dir) rmSync(dir, { recursive: true, force: true });
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await exited;
    },
  };
}
