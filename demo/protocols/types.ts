// A simulated provider's wire format: it checks the credentials the real API expects, then
// answers a chat request (or a model-list call) the way that API would, using the simulator.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Simulator } from '../simulator.js';

export interface DemoProtocol {
  /** The provider name this simulates (openai, anthropic, …). */
  provider: string;
  /** The gateway settings that point this provider at the simulator listening on `url`. */
  env(url: string, key: string): Record<string, string>;
  /** Serves one request; `body` is the parsed JSON body (undefined for GET). */
  serve(req: IncomingMessage, res: ServerResponse, body: any, simulator: Simulator, key: string): Promise<void>;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers });
  res.end(payload);
}

export function startSse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
}
