// Starts the real gateway in-process on port 0 with a given environment, and an OpenAI SDK client
// pointed at it. Logs are captured (not printed) so tests can assert on them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import OpenAI from 'openai';
import { createApp, type App, type AppOptions } from '../../core/app.js';

export const GATEWAY_KEY = 'uc_test_0123456789abcdef';

/**
 * For tests of one provider's protocol: every request reaches the upstream exactly once — no
 * retries, no circuit breaker, no response cache (those have their own tests).
 */
export const PROTOCOL_ONLY = {
  MODELGATE_RETRIES: '0',
  MODELGATE_CIRCUIT_BREAKER_ENABLED: 'false',
  MODELGATE_CACHE_ENABLED: 'false',
} as const;

export interface TestGateway {
  app: App;
  /** Base URL of the API, ending in /v1. */
  url: string;
  /** Parsed JSON log lines written so far. */
  logs: Array<Record<string, unknown>>;
  client(options?: { apiKey?: string; maxRetries?: number }): OpenAI;
  close(): Promise<void>;
}

export async function startGateway(env: Record<string, string | undefined> = {}, options: Omit<AppOptions, 'logDestination'> = {}): Promise<TestGateway> {
  const logs: Array<Record<string, unknown>> = [];
  const ownDataDir = env.MODELGATE_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'modelgate-test-'));
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) logs.push(JSON.parse(line));
      callback();
    },
  });
  const removeDataDir = () => {
    if (env.MODELGATE_DATA_DIR === undefined) rmSync(ownDataDir, { recursive: true, force: true });
  };
  const app = await createApp(
    {
      MODELGATE_API_KEY: GATEWAY_KEY,
      MODELGATE_PORT: '0',
      MODELGATE_HOST: '127.0.0.1',
      MODELGATE_LOG_LEVEL: 'info',
      // Each gateway its own ledger, unless the test shares one on purpose (restarts).
      MODELGATE_DATA_DIR: ownDataDir,
      ...env,
    },
    { ...options, logDestination: destination },
  ).catch((error: unknown) => {
    removeDataDir();
    throw error;
  });
  const url = await app.listen();
  return {
    app,
    url,
    logs,
    client: (options = {}) => new OpenAI({ apiKey: options.apiKey ?? GATEWAY_KEY, baseURL: url, maxRetries: options.maxRetries ?? 0 }),
    async close() {
      await app.close();
      removeDataDir();
    },
  };
}

/** Two replicas on the same settings (a shared Redis, say), both closed when the test ends. */
export async function startPair(t: { teardown(fn: () => Promise<void>): void }, env: Record<string, string | undefined>): Promise<[TestGateway, TestGateway]> {
  const a = await startGateway(env);
  const b = await startGateway(env);
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  return [a, b];
}

/** A raw HTTP call to the gateway, for what the SDK would not send. */
export async function call(
  url: string,
  path: string,
  init: { method?: string; body?: string | Buffer; headers?: Record<string, string>; key?: string | null } = {},
): Promise<{ status: number; headers: Headers; json: any; text: string }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...init.headers };
  if (init.key !== null) headers.authorization = `Bearer ${init.key ?? GATEWAY_KEY}`;
  const response = await fetch(`${url}${path}`, { method: init.method ?? (init.body ? 'POST' : 'GET'), headers, body: init.body });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, json, text };
}
