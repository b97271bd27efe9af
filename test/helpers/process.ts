// The gateway as its own process, started the way `npm start` starts it (node scripts/launch.mjs):
// for what only a process shows — several started at the same moment, exit statuses, SIGKILL.
// Every process started is killed when the test file ends, whatever happened to the test.
import t from 'tap';
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
  /** What it printed to stdout that is not a log line (the demo's banner). */
  output: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or signal) once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Runs `node scripts/launch.mjs <entry>` with the test defaults and `env`; resolves when it exits. */
export function runLaunch(entry: string, env: Record<string, string>, root = projectRoot): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'scripts', 'launch.mjs'), entry], { cwd: root, env: { ...baseEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    track(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** How long a gateway may take to listen before the test gives up on it. */
const START_TIMEOUT_MS = 30_000;
const children = new Set<ChildProcess>();
let reaping = false;

/** Kills, when the test file ends, every process it started. */
function track(child: ChildProcess): void {
  children.add(child);
  child.once('exit', () => children.delete(child));
  if (reaping) return;
  reaping = true;
  t.teardown(() => {
    for (const running of children) running.kill('SIGKILL');
  });
}

/** Settings of the developer's shell that would change what a test runs against. */
const OURS = /^(MODELGATE_|REDIS_|OPENAI_|ANTHROPIC_|GOOGLE_|COHERE_|MISTRAL_|CUSTOM_)/;

function baseEnv(): Record<string, string | undefined> {
  // The test runner's own environment, minus tsx's loader (the process runs the compiled dist/) and
  // minus gateway settings exported in the shell (an exported MODELGATE_DATABASE_URL would turn an
  // SQLite test into a PostgreSQL one).
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_OPTIONS' && !OURS.test(name)));
  return { ...inherited, MODELGATE_API_KEY: GATEWAY_KEY, MODELGATE_HOST: '127.0.0.1', MODELGATE_PORT: '0', MODELGATE_LOG_LEVEL: 'info' };
}

/**
 * Starts a gateway process (`entry` of scripts/launch.mjs: the server unless told, or the demo) in
 * `cwd` (the project root unless told) from the checkout at `root` (this one unless told); resolves
 * once it listens (rejects if it exits first, with its stderr).
 */
export function startGatewayProcess(env: Record<string, string>, options: { entry?: string; cwd?: string; root?: string } = {}): Promise<GatewayProcess> {
  const root = options.root ?? projectRoot;
  const child = spawn(process.execPath, [join(root, 'scripts', 'launch.mjs'), options.entry ?? 'server'], {
    cwd: options.cwd ?? root,
    env: { ...baseEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child);
  const logs: Array<Record<string, unknown>> = [];
  let output = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the gateway did not listen within ${START_TIMEOUT_MS} ms: ${stderr.trim()}`));
    }, START_TIMEOUT_MS);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        output += `${line}\n`;
        return;
      }
      logs.push(entry);
      if (entry.msg === 'modelgate listening') {
        clearTimeout(timer);
        resolve({
          child,
          url: String(entry.url).replace('localhost', '127.0.0.1'),
          logs,
          output: () => output,
          stderr: () => stderr,
          exited,
          async stop(signal: NodeJS.Signals = 'SIGTERM') {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
            await exited;
          },
        });
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`the gateway exited (${code ?? signal}) before listening: ${stderr.trim()}`));
    });
  });
}
