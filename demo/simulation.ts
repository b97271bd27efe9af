// The demo's simulated providers: one local server per provider, each speaking that provider's
// real protocol (demo/protocols/), so the real adapters, routing and failover run against them.
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { projectRoot } from '../core/paths.js';
import { Simulator } from './simulator.js';
import { openAIProtocol } from './protocols/openai.js';
import { anthropicProtocol } from './protocols/anthropic.js';
import { googleProtocol } from './protocols/google.js';
import { cohereProtocol } from './protocols/cohere.js';
import { mistralProtocol } from './protocols/mistral.js';
import type { DemoProtocol } from './protocols/types.js';

export const PROTOCOLS: readonly DemoProtocol[] = [
  openAIProtocol('openai'),
  anthropicProtocol(),
  googleProtocol(),
  cohereProtocol,
  mistralProtocol,
  openAIProtocol('custom'),
];

export interface Simulation {
  env: Record<string, string>;
  close(): Promise<void>;
}

/** Starts one simulated server per provider; returns the settings that point the gateway at them. */
export async function startSimulation(options: { failureRate: number; speed: number }): Promise<Simulation> {
  const simulator = new Simulator(options);
  const servers: Server[] = [];
  const env: Record<string, string> = { MODELGATE_MODEL_CATALOG: join(projectRoot, 'demo', 'catalog.json') };
  for (const protocol of PROTOCOLS) {
    const key = `demo-${protocol.provider}-key`;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        let body: unknown;
        try {
          body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
        } catch {
          res.writeHead(400).end('bad json');
          return;
        }
        protocol.serve(req, res, body, simulator, key).catch(() => res.destroy());
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    Object.assign(env, protocol.env(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, key));
  }
  return {
    env,
    close: async () => {
      for (const server of servers) server.closeAllConnections();
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    },
  };
}
