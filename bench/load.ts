// A closed-loop HTTP load generator: `connections` keep-alive sockets, each sending the next request
// as soon as the previous response ended, for `durationMs`. Records every latency.
import http from 'node:http';

export interface LoadResult {
  requests: number;
  errors: number;
  durationMs: number;
  latenciesMs: Float64Array;
}

export interface LoadOptions {
  port: number;
  path: string;
  headers: Record<string, string>;
  /**
   * The body of each request, given a sequence number that is never repeated within the process
   * (across calls too), so a body built from it is never answered from the gateway's cache.
   */
  body(sequence: number): string;
  connections: number;
  durationMs: number;
}

/** Sends `body` as a JSON POST to 127.0.0.1:`port``path` over `agent`; `body` is sent whole. */
export function postJson(port: number, path: string, headers: Record<string, string>, agent: http.Agent, body: string, onResponse: (res: http.IncomingMessage) => void): http.ClientRequest {
  const req = http.request(
    { host: '127.0.0.1', port, path, method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
    onResponse,
  );
  req.end(body);
  return req;
}

/** Shared by every call: a later measurement must not repeat the bodies an earlier one sent. */
let sequence = 0;

/** The next request number: for a body built outside load() that must not repeat either. */
export function nextSequence(): number {
  return sequence++;
}

export async function load(options: LoadOptions): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + options.durationMs;

  const one = () =>
    new Promise<void>((resolve) => {
      const body = options.body(nextSequence());
      const t0 = performance.now();
      postJson(options.port, options.path, options.headers, agent, body, (res) => {
        res.on('data', () => {});
        res.on('end', () => {
          if (res.statusCode === 200) latencies.push(performance.now() - t0);
          else errors++;
          resolve();
        });
      }).on('error', () => {
        errors++;
        resolve();
      });
    });

  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (performance.now() < deadline) await one();
    }),
  );
  agent.destroy();
  return { requests: latencies.length, errors, durationMs: performance.now() - started, latenciesMs: Float64Array.from(latencies) };
}

export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}
