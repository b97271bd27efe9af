// Two fake providers behind the real gateway, for the failover tests: the model `duo` is served by
// openai (the `primary` fake, first, being cheaper) and by custom (the `secondary` fake). Settings
// keep failover fast and the breaker out of the way unless a test asks for it.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type TestGateway } from './gateway.js';
import { openAIResponder, PROVIDER_KEYS } from './fakes.js';
import { FakeProvider, fixtureJson, json, type Responder } from './fake-provider.js';

export interface CatalogEntry {
  provider: string;
  id: string;
  native?: string;
  price: number | null;
  quality?: number;
}

export interface Duo {
  readonly primary: FakeProvider;
  readonly secondary: FakeProvider;
  /** Writes a catalog file of `entries` (prices per token) and returns its path. */
  catalog(name: string, entries: CatalogEntry[]): string;
  env(extra?: Record<string, string>): Record<string, string>;
  withGateway(extra: Record<string, string>, fn: (gateway: TestGateway) => Promise<void>): Promise<void>;
}

interface Hooks {
  after(fn: () => Promise<void>): void;
  beforeEach(fn: () => void): void;
}

/** Starts the two fakes; they are reset before each of the file's tests and closed after the last. */
export async function startDuo(t: Hooks): Promise<Duo> {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-failover-'));
  const primary = await FakeProvider.start(openAIResponder(PROVIDER_KEYS.openai));
  const secondary = await FakeProvider.start(openAIResponder(PROVIDER_KEYS.custom));
  t.after(async () => {
    await primary.close();
    await secondary.close();
  });
  t.beforeEach(() => {
    primary.reset();
    secondary.reset();
  });

  const catalog = (name: string, entries: CatalogEntry[]) => {
    const file = join(dir, name);
    const models = entries.map((e) => ({ provider: e.provider, id: e.id, native_id: e.native ?? e.id, price: { input: e.price, output: e.price }, quality: { score: e.quality ?? 0.9 } }));
    writeFileSync(file, JSON.stringify({ models }));
    return file;
  };
  const ordered = catalog('ordered.json', [
    { provider: 'openai', id: 'duo', native: 'gpt-4o-mini', price: 1e-7 },
    { provider: 'custom', id: 'duo', native: 'llama', price: 2e-7 },
  ]);

  const env = (extra: Record<string, string> = {}) => ({
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${primary.url}/v1`,
    CUSTOM_API_KEY: PROVIDER_KEYS.custom,
    CUSTOM_BASE_URL: `${secondary.url}/v1`,
    MODELGATE_MODEL_CATALOG: ordered,
    MODELGATE_CACHE_ENABLED: 'false',
    MODELGATE_RETRIES: '1',
    MODELGATE_RETRY_DELAY: '10',
    MODELGATE_FAILOVER_DELAY: '0',
    MODELGATE_TIMEOUT: '500',
    MODELGATE_CIRCUIT_BREAKER_THRESHOLD: '100',
    ...extra,
  });

  return {
    primary,
    secondary,
    catalog,
    env,
    async withGateway(extra, fn) {
      const gateway = await startGateway(env(extra));
      try {
        await fn(gateway);
      } finally {
        await gateway.close();
      }
    },
  };
}

export const ask = { model: 'duo', messages: [{ role: 'user' as const, content: 'What is the capital of France?' }] };
export const body = JSON.stringify(ask);

/** An error status with one of the protocol fixtures as its body. */
export const failing = (status: number, file: string, headers: Record<string, string> = {}): Responder => json(status, fixtureJson(file), headers);

/** Polls `what` (errors count as false) every 20 ms, up to ~5 s. */
export async function poll(what: () => Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 250; i++) {
    if (await what().catch(() => false)) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}
