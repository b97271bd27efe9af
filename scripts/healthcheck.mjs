// The container's health probe (Dockerfile HEALTHCHECK): asks this gateway's /v1/health where the
// gateway listens — MODELGATE_HOST and MODELGATE_PORT as the server reads them — and exits 0 when it
// answers 200, 1 otherwise. A wildcard host (0.0.0.0, ::) is probed on loopback. Plain JavaScript:
// it runs with nothing but Node.
import { healthUrl } from './health-url.mjs';

const TIMEOUT_MS = 2500;

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

await main();
