// Where the health probe (healthcheck.mjs) looks: the URL of /v1/health for MODELGATE_HOST and
// MODELGATE_PORT as the server reads them. Apart from the probe so that tests import it without
// running a probe.
const DEFAULT_PORT = 3000;

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
