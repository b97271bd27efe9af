// `npm run demo`: the gateway on its embedded default, in front of simulated providers that speak
// each provider's real protocol (so the real adapters, routing and failover run against them), with a
// demo key and ready-to-paste examples. No provider keys needed. DEMO_FAILURE_RATE (default 0.05) and
// DEMO_SPEED (default 1; 0 = no simulated latency) tune the simulation. Its data goes to a temporary
// directory removed when it stops, unless MODELGATE_DATA_DIR or MODELGATE_DATABASE_URL say otherwise
// (demo/data-dir.ts); the banner says which.
// First: the gateway's heap settings (core/heap-tuning.ts).
import '../core/heap-tuning.js';
import { randomBytes } from 'node:crypto';
import { createApp, type App } from '../core/app.js';
import { ConfigError } from '../core/config.js';
import { ListenError } from '../core/server.js';
import { StoreError } from '../core/store/database.js';
import { MigrationError } from '../core/store/migrate.js';
import { PROTOCOLS, startSimulation } from './simulation.js';
import { demoDataDir, describeStore } from './data-dir.js';

function banner(url: string, key: string, providers: string[], where: string[]): string {
  return `
  modelgate demo is running at ${url}
  simulated providers: ${providers.join(', ')}
${where.map((line) => `  ${line}\n`).join('')}
  demo API key:  ${key}

  Try it with curl:

    curl ${url}/chat/completions \\
      -H "Authorization: Bearer ${key}" \\
      -H "Content-Type: application/json" \\
      -d '{"model":"auto","messages":[{"role":"user","content":"Hello!"}]}' -i

  Or with the OpenAI SDK (npm i openai):

    import OpenAI from 'openai';
    const client = new OpenAI({ baseURL: '${url}', apiKey: '${key}' });
    const reply = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hello!' }],
    });
    console.log(reply.choices[0].message.content);

  Dashboard: ${url.replace(/\/v1$/, '')}/dashboard (sign in with the demo API key)
  Models: curl ${url}/models -H "Authorization: Bearer ${key}"
  Health: curl ${url}/health
  Stop with Ctrl+C.
`;
}

/** Where the demo's state lives, one banner line each: the database, and shared counters when they are in Redis. */
function whereDataGoes(app: App, dataDir: ReturnType<typeof demoDataDir>): string[] {
  const lines = [describeStore(dataDir, app.deps.store())];
  if (app.config.values.MODELGATE_STORE === 'redis') {
    lines.push('counters:      Redis (MODELGATE_STORE=redis): rate and budget counters are shared with every gateway on it');
  }
  return lines;
}

async function main(): Promise<void> {
  const dataDir = demoDataDir(process.env);
  // Every way out removes a temporary directory: a clean stop, a failed start, an uncaught error.
  process.on('exit', () => dataDir.remove());
  const simulation = await startSimulation({
    failureRate: Number(process.env.DEMO_FAILURE_RATE ?? 0.05),
    speed: Number(process.env.DEMO_SPEED ?? 1),
  });
  const key = process.env.MODELGATE_API_KEY || `uc_demo_${randomBytes(12).toString('hex')}`;
  let app: App;
  try {
    app = await createApp({ ...process.env, MODELGATE_API_KEY: key, MODELGATE_DATA_DIR: dataDir.path, ...simulation.env });
  } catch (error) {
    await simulation.close();
    if (error instanceof ConfigError || error instanceof StoreError || error instanceof MigrationError) {
      process.stderr.write(`modelgate: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  let url: string;
  try {
    url = await app.listen();
  } catch (error) {
    if (!(error instanceof ListenError)) throw error;
    process.stderr.write(`modelgate: ${error.message}\n`);
    await app.close().catch(() => undefined);
    await simulation.close();
    process.exit(1);
  }
  process.stdout.write(banner(url, key, PROTOCOLS.map((p) => p.provider), whereDataGoes(app, dataDir)));
  let stopping = false;
  const stop = () => {
    // A second Ctrl+C does not wait for in-flight streams: out at once (the 'exit' hook still cleans up).
    if (stopping) process.exit(130);
    stopping = true;
    app
      .close()
      .then(() => simulation.close())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          process.stderr.write(`modelgate demo: shutdown failed: ${(error as Error).message}\n`);
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`modelgate demo: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
