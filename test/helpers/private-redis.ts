// A redis-server of the test's own on a free port, for tests that stop or freeze Redis mid-run.
// The shared Redis on 6379 is never touched: other test files use it at the same time.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { answersPing } from './redis.js';

export interface PrivateRedis {
  port: number;
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

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let i = 0; i < 100 && !(await answersPing(port)); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  if (!(await answersPing(port))) throw new Error(`private redis-server on ${port} did not answer`);
  return {
    port,
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await exited;
    },
  };
}
