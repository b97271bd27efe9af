// MODELGATE_WORKERS=2, as `npm start` runs it: both workers answer on the one port and act as one
// gateway — a key's rate limit holds across them, a revoked key is refused by each at once, and
// /metrics counts them both — and SIGTERM ends them all with status 0. Without the shared state in Redis, or when a worker
// cannot start, the start stops with status 1 and one message.
import t from 'tap';
import { request } from 'node:http';
import { startGatewayProcess, runLaunch, type GatewayProcess } from '../helpers/process.js';
import { GATEWAY_KEY, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { testDataDir } from '../helpers/database.js';
import { flushPrefix, redisEnv, testPrefix } from '../helpers/redis.js';
import { testCatalog } from '../helpers/money.js';

/**
 * One request on a connection of its own: the primary hands each new connection to the next
 * worker, so consecutive calls alternate between the two.
 */
function fresh(url: string, path: string, key: string, body?: unknown, method = body ? 'POST' : 'GET'): Promise<{ status: number; json: any; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, agent: false, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, json: res.headers['content-type']?.startsWith('application/json') ? JSON.parse(text) : undefined, text }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

async function allListening(gateway: GatewayProcess): Promise<void> {
  for (let waited = 0; !gateway.logs.some((line) => line.msg === 'workers listening'); waited += 50) {
    if (waited > 30_000) throw new Error(`the workers did not all listen: ${gateway.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Which workers logged the `count` requests that `match` (their lines may reach stdout after the
 * answer). The primary hands a new connection to the next worker free to take it, so consecutive
 * calls alternate when both keep up; the assertions check that both took part.
 */
async function servedBy(gateway: GatewayProcess, count: number, match: (line: Record<string, unknown>) => boolean): Promise<number[]> {
  const lines = () => gateway.logs.filter((line) => line.msg === 'request' && match(line));
  for (let waited = 0; lines().length < count && waited < 5_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
  return [...new Set(lines().map((line) => line.worker as number))].sort();
}

t.test('two workers share one rate limit and one revocation, and SIGTERM stops both with status 0', async (t) => {
  const upstream = await startFakeOpenAI();
  const prefix = testPrefix();
  t.teardown(async () => {
    await upstream.close();
    await flushPrefix(prefix);
  });
  const gateway = await startGatewayProcess({
    ...PROTOCOL_ONLY,
    ...redisEnv(prefix),
    MODELGATE_WORKERS: '2',
    MODELGATE_STORE: 'redis',
    MODELGATE_LOG_PERFORMANCE: 'true',
    MODELGATE_DATA_DIR: testDataDir(),
    MODELGATE_MODEL_CATALOG: testCatalog(),
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
  });
  await allListening(gateway);
  t.equal(gateway.logs.filter((line) => String(line.msg).startsWith('database: migration applied') && line.worker !== undefined).length, 0, 'the primary migrated; no worker did');

  const limited = (await fresh(gateway.url, '/admin/keys', GATEWAY_KEY, { name: 'two a minute', limits: { requests_per_minute: 2 } })).json as { id: string; key: string };
  const ask = () => fresh(gateway.url, '/chat/completions', limited.key, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });
  const statuses = [(await ask()).status, (await ask()).status, (await ask()).status];
  t.same(statuses, [200, 200, 429], 'the third request is refused, though its worker had served only one');
  t.same(await servedBy(gateway, 3, (line) => line.keyId === limited.id), [1, 2], 'both workers answered (with a limit per worker, 3 would have passed)');

  const revoked = (await fresh(gateway.url, '/admin/keys', GATEWAY_KEY, { name: 'to revoke' })).json as { id: string; key: string };
  const models = async () => [0, 1, 2, 3].reduce<Promise<number[]>>(async (so, _) => [...(await so), (await fresh(gateway.url, '/models', revoked.key)).status], Promise.resolve([]));
  t.same(await models(), [200, 200, 200, 200], 'the key is known');
  t.same(await servedBy(gateway, 4, (line) => line.keyId === revoked.id), [1, 2], 'by both workers');
  t.equal((await fresh(gateway.url, `/admin/keys/${revoked.id}`, GATEWAY_KEY, undefined, 'DELETE')).status, 200);
  t.same(await models(), [401, 401, 401, 401], 'once revoked, it is refused at once');
  t.same(await servedBy(gateway, 4, (line) => line.status === 401 && String(line.path).endsWith('/models')), [1, 2], 'by both workers');

  // The 429 came from one worker, the 401s from both: each scrape, whichever worker takes it, counts them all.
  for (const scrape of [await fresh(gateway.url.replace(/\/v1$/, ''), '/metrics', GATEWAY_KEY), await fresh(gateway.url.replace(/\/v1$/, ''), '/metrics', GATEWAY_KEY)]) {
    t.match(scrape.text, /^modelgate_refusals_total\{reason="rate_limit"\} 1$/m);
    t.match(scrape.text, /^modelgate_refusals_total\{reason="auth"\} 4$/m);
  }

  // A worker that dies takes no counts with it: Prometheus would read a lower total as a reset.
  const pids = gateway.logs.find((line) => line.msg === 'workers listening')!.pids as number[];
  process.kill(pids[0]!, 'SIGKILL');
  for (let waited = 0; !gateway.logs.some((line) => line.msg === 'a worker exited unexpectedly; starting another'); waited += 50) {
    if (waited > 10_000) throw new Error('the killed worker was not noticed');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const after = await fresh(gateway.url.replace(/\/v1$/, ''), '/metrics', GATEWAY_KEY);
  t.match(after.text, /^modelgate_refusals_total\{reason="auth"\} 4$/m, 'the dead worker\'s counts stay in the sum');
  t.match(after.text, /^modelgate_refusals_total\{reason="rate_limit"\} 1$/m);
  for (let waited = 0; !gateway.logs.some((line) => line.msg === 'modelgate listening' && line.worker === 3); waited += 50) {
    if (waited > 20_000) throw new Error('no worker replaced the killed one');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  await gateway.stop('SIGTERM');
  t.same(await gateway.exited, { code: 0, signal: null });
  t.equal(gateway.logs.filter((line) => line.msg === 'shutting down' && line.worker !== undefined).length, 2, 'both workers (the replacement among them) shut down gracefully');
});

t.test('two workers with the embedded store stop the start with status 1 naming the settings', async (t) => {
  const run = await runLaunch('server', { MODELGATE_WORKERS: '2', MODELGATE_DATA_DIR: testDataDir() });
  t.equal(run.code, 1);
  t.match(run.stderr, /^modelgate: Invalid configuration:\n {2}- MODELGATE_STORE: must be redis with MODELGATE_WORKERS=2 .*\n {2}- MODELGATE_CACHE_TYPE: must be redis/);
});

t.test('a worker that cannot start stops the start with status 1 and its message, said once', async (t) => {
  const run = await runLaunch('server', {
    ...redisEnv(testPrefix()),
    MODELGATE_WORKERS: '2',
    MODELGATE_STORE: 'redis',
    MODELGATE_CACHE_TYPE: 'redis',
    MODELGATE_DATA_DIR: testDataDir(),
    // Read by each worker as it assembles the app, after the primary's checks passed.
    MODELGATE_MODEL_CATALOG: '/nonexistent/models.json',
  });
  t.equal(run.code, 1);
  t.equal(run.stderr.match(/MODELGATE_MODEL_CATALOG: /g)?.length, 1, run.stderr);
  t.match(run.stderr, /modelgate: worker \d exited \(status 1\) while starting; stopping the others\n/);
});
