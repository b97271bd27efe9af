// The process around the request path: body size limit, boot validation exiting 1, and graceful
// shutdown on SIGTERM finishing an in-flight stream — with the real entry point as a child process.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import OpenAI from 'openai';
import { projectRoot } from '../../core/paths.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, call, GATEWAY_KEY, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { fixture, sse, sleep, type FakeProvider } from '../helpers/fake-provider.js';

let upstream: FakeProvider;
t.before(async () => {
  upstream = await startFakeOpenAI();
});
t.after(() => upstream.close());

/** Runs core/main.ts like `npm start` would (from source), with only the given settings. */
function startProcess(env: Record<string, string>): { child: ChildProcess; url: Promise<string>; exit: Promise<number | null>; stderr: () => string } {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(MODELGATE_|OPENAI_|ANTHROPIC_|GOOGLE_|COHERE_|MISTRAL_|CUSTOM_|REDIS_)/.test(name)));
  const child = spawn(process.execPath, ['--import', 'tsx', 'core/main.ts'], { cwd: projectRoot, env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'modelgate listening') resolve(entry.url!);
      } catch {
        // not a log line
      }
    });
    child.once('exit', () => reject(new Error(`exited before listening: ${stderr}`)));
  });
  url.catch(() => {});
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, url, exit, stderr: () => stderr };
}

t.test('a body over MODELGATE_MAX_BODY_SIZE is 413, declared or streamed', async (t) => {
  const gateway = await startGateway({ OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_MAX_BODY_SIZE: '0.001' });
  t.teardown(() => gateway.close());
  const big = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x'.repeat(5000) }] });
  const declared = await call(gateway.url, '/chat/completions', { body: big });
  t.equal(declared.status, 413);
  t.equal(declared.json.error.code, 'request_too_large');
  t.match(declared.json.error.message, /limit is 1048 bytes/);
  // Without Content-Length (chunked), the limit applies as the body arrives.
  const chunked = await fetch(`${gateway.url}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' },
    body: new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    }),
    duplex: 'half',
  } as RequestInit);
  t.equal(chunked.status, 413);
  t.equal(upstream.requests.length, 0);
  const small = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }) });
  t.equal(small.status, 200, 'a body under the limit passes');
});

t.test('bad settings stop the boot with exit status 1 and one message naming each', async (t) => {
  const run = startProcess({ MODELGATE_API_KEY: 'not-uc', MODELGATE_ROUTING_STRATEGY: 'fastest', MODELGATE_TIMEOUT: 'soon', MODELGATE_PORT: '0' });
  t.equal(await run.exit, 1);
  const message = run.stderr();
  t.match(message, /Invalid configuration/);
  t.match(message, /MODELGATE_API_KEY: must begin with uc_/);
  t.match(message, /MODELGATE_ROUTING_STRATEGY: must be one of cost_optimized, quality_optimized, performance_optimized \(got "fastest"\)/);
  t.match(message, /MODELGATE_TIMEOUT: must be an integer \(got "soon"\)/);
  t.notMatch(message, /not-uc/, 'the key itself is not echoed');
});

t.test('SIGTERM lets an in-flight stream finish, refuses new connections, then exits 0', async (t) => {
  upstream.reset();
  upstream.next(sse(fixture('openai/stream.sse'), { delayMs: 200 }));
  const run = startProcess({
    MODELGATE_API_KEY: GATEWAY_KEY,
    MODELGATE_PORT: '0',
    MODELGATE_HOST: '127.0.0.1',
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
  });
  t.teardown(() => {
    run.child.kill('SIGKILL');
  });
  const url = await run.url;
  const client = new OpenAI({ baseURL: url, apiKey: GATEWAY_KEY, maxRetries: 0 });
  const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true });
  let text = '';
  let signalled = false;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    if (!signalled && text) {
      signalled = true;
      run.child.kill('SIGTERM');
      await sleep(100);
      await t.rejects(fetch(`${url}/health`), { name: 'TypeError' }, 'no new connections once shutting down');
    }
  }
  t.equal(text, 'The capital of France is Paris.', 'the stream that was in flight finished whole');
  t.equal(await run.exit, 0);
});

t.test('a stream cut by the shutdown timeout is still billed before the ledger closes', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-shutdown-'));
  const env = {
    ...PROTOCOL_ONLY,
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_DATA_DIR: dataDir,
    MODELGATE_SHUTDOWN_TIMEOUT: '200',
  };
  upstream.reset();
  upstream.next(sse(fixture('openai/stream.sse'), { delayMs: 400 }));
  const gateway = await startGateway(env);
  const stream = await gateway.client().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true });
  let closing: Promise<void> | undefined;
  try {
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content && !closing) closing = gateway.close();
  } catch {
    // the connection is cut when the shutdown timeout passes
  }
  await closing;
  const reopened = await startGateway(env);
  t.teardown(() => reopened.close());
  const usage = (await call(reopened.url, '/usage')).json;
  t.equal(usage.budgets.day.requests, 1, 'the cut request was recorded');
  t.ok(usage.budgets.day.spent_usd > 0, `and billed: $${usage.budgets.day.spent_usd}`);
});

t.end();
