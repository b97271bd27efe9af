// The floor: a bare http-proxy pass-through, the least any Node proxy can cost — same library and
// keep-alive agent as the gateway, no parsing, no pipeline. Prints its port on stdout.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProxyServer } from 'http-proxy-3';

const target = process.argv[2]!;
const agent = new http.Agent({ keepAlive: true, maxSockets: 512, maxFreeSockets: 64, scheduling: 'lifo' });
const proxy = createProxyServer({ target, agent });
proxy.on('error', (_error, _req, res) => {
  if ('writeHead' in res && !res.headersSent) res.writeHead(502);
  res.end();
});
const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => proxy.web(req, res));
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0));
