// The gateway as its own process, started the way `npm start` starts it (node scripts/launch.mjs):
// for what only a process shows — several started at the same moment, exit statuses, SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { projectRoot } from '../../core/paths.js';
import { GATEWAY_KEY } from './gateway.js';

export interface GatewayProcess {
  child: ChildProcess;
  /** Base URL of the API, ending in /v1 (once it listens). */
  url: string;
  /** Parsed JSON log lines so far. */
  logs: Array<Record<string, unknown>>;
  stderr: () => string;
  /** Resolves with the exit code (or signal) once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Runs `node scripts/launch.mjs <entry>` with the test defaults and `env`; resolves when it exits. */
export function runLaunch(entry: string, env: Record<string, string>, root = projectRoot): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'scripts', 'launch.mjs'), entry], { cwd: root, env: { ...baseEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

function baseEnv(): Record<string, string | undefined> {
  // The test runner's own environment, minus tsx's loader: the process runs the compiled dist/.
  const { NODE_OPTIONS: _options, ...rest } = process.env;
  return { ...rest, MODELGATE_API_KEY: GATEWAY_KEY, MODELGATE_HOST: '127.0.0.1', MODELGATE_PORT: '0', MODELGATE_LOG_LEVEL: 'info' };
}

/** Starts a gateway process; resolves once it listens (rejects if it exits first, with its stderr). */
export function startGatewayProcess(env: Record<string, string>): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [join(projectRoot, 'scripts', 'launch.mjs'), 'server'], { cwd: projectRoot, env: { ...baseEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: Array<Record<string, unknown>> = [];
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      logs.push(entry);
      if (entry.msg === 'modelgate listening') {
        resolve({
          child,
          url: String(entry.url).replace('localhost', '127.0.0.1'),
          logs,
          stderr: () => stderr,
          exited,
          async stop(signal: NodeJS.Signals = 'SIGTERM') {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            await exited;
          },
        });
      }
    });
    void exited.then(({ code, signal }) => reject(new Error(`the gateway exited (${code ?? signal}) before listening: ${stderr.trim()}`)));
  });
}
