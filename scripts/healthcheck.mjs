// The container's health probe (Dockerfile HEALTHCHECK): asks this gateway's /v1/health where the
// gateway listens — MODELGATE_HOST and MODELGATE_PORT as the server reads them — and exits 0 when it
// answers 200, 1 otherwise. A wildcard host (0.0.0.0, ::) is probed on loopback. Plain JavaScript:
// it runs with nothing but Node.
const DEFAULT_PORT = 3000;
const TIMEOUT_MS = 2500;

/** The URL of the health endpoint for these settings, or a reason there is none. */
export function healthUrl(env) {
  const rawPort = env.MODELGATE_PORT?.trim() || String(DEFAULT_PORT);
  const port = Number(rawPort);
  if (!Number.isInteger(port) || port < 1 || port > 65535) return { problem: `MODELGATE_PORT=${rawPort} names no port to probe` };
  const host = env.MODELGATE_HOST?.trim() || '0.0.0.0';
  const probed = host === '0.0.0.0' ? '127.0.0.1' : host === '::' || host === '[::]' ? '::1' : host;
  const literal = probed.includes(':') && !probed.startsWith('[') ? `[${probed}]` : probed;
  return { url: `http://${literal}:${port}/v1/health` };
}

async function main() {
  const target = healthUrl(process.env);
  if (target.problem) {
    console.error(`modelgate healthcheck: ${target.problem}`);
    process.exit(1);
  }
  try {
    const response = await fetch(target.url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
    if (response.status !== 200) console.error(`modelgate healthcheck: ${target.url} answered ${response.status}`);
    process.exit(response.status === 200 ? 0 : 1);
  } catch (error) {
    console.error(`modelgate healthcheck: ${target.url}: ${error.cause?.code ?? error.cause?.message ?? error.message}`);
    process.exit(1);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
