// `npm run demo`: the gateway on its embedded default, in front of simulated providers that speak
// each provider's real protocol (so the real adapters, routing and failover run), with a demo key
// and ready-to-paste examples. No provider keys needed. DEMO_FAILURE_RATE (default 0.05) and
// DEMO_SPEED (default 1; 0 = no simulated latency) tune the simulation.
import { randomBytes } from 'node:crypto';
import { createApp } from '../core/app.js';
import { ConfigError } from '../core/config.js';
import { PROTOCOLS, startSimulation } from './simulation.js';

function banner(url: string, key: string, providers: string[]): string {
  return `
  modelgate demo is running at ${url}
  simulated providers: ${providers.join(', ')}

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

  Models: curl ${url}/models -H "Authorization: Bearer ${key}"
  Health: curl ${url}/health
  Stop with Ctrl+C.
`;
}

async function main(): Promise<void> {
  const simulation = await startSimulation({
    failureRate: Number(process.env.DEMO_FAILURE_RATE ?? 0.05),
    speed: Number(process.env.DEMO_SPEED ?? 1),
  });
  const key = process.env.MODELGATE_API_KEY || `uc_demo_${randomBytes(12).toString('hex')}`;
  let app;
  try {
    app = await createApp({ ...process.env, MODELGATE_API_KEY: key, ...simulation.env });
  } catch (error) {
    await simulation.close();
    if (error instanceof ConfigError) {
      process.stderr.write(`modelgate: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const url = await app.listen();
  process.stdout.write(banner(url, key, PROTOCOLS.map((p) => p.provider)));
  const stop = () => {
    app.close().then(() => simulation.close()).then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`modelgate demo: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
