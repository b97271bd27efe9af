import t from 'tap';
import { mkdtempSync, readdirSync, readFileSync, existsSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { anonymizeLogs, createLogger, linesWritten, logLarge, redactText, type LoggingSettings } from '../../core/logger.js';
import { Anonymizer } from '../../core/anonymize.js';
import { LogRetention } from '../../core/log-retention.js';
import { startGateway, call, GATEWAY_KEY, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { fixture, json, sleep, sse } from '../helpers/fake-provider.js';

const defaults: LoggingSettings = {
  MODELGATE_LOG_LEVEL: 'info',
  MODELGATE_LOG_REQUESTS: false,
  MODELGATE_LOG_RESPONSES: false,
  MODELGATE_LOG_ERRORS: true,
  MODELGATE_LOG_PERFORMANCE: false,
  MODELGATE_LOG_FILE: undefined,
  MODELGATE_LOG_ROTATION: true,
  MODELGATE_LOG_ROTATION_SIZE: 100,
  MODELGATE_LOG_ROTATION_COUNT: 5,
  MODELGATE_LOG_RETENTION: 90,
};

function capture() {
  const lines: Array<Record<string, any>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, stream };
}

t.test('keys and credentials are redacted wherever they appear', async (t) => {
  const { lines, stream } = capture();
  const logger = createLogger(defaults, stream);
  logger.info({ authorization: 'Bearer uc_secret', headers: { 'x-api-key': 'sk-ant-secret', cookie: 'a=b' }, deep: { inner: { password: 'p' } }, apiKey: 'k' }, 'calling with uc_abcdef123456 and sk-proj-abcdef123456');
  const line = lines[0]!;
  t.equal(line.authorization, '[REDACTED]');
  t.equal(line.headers['x-api-key'], '[REDACTED]');
  t.equal(line.headers.cookie, '[REDACTED]');
  t.equal(line.deep.inner.password, '[REDACTED]');
  t.equal(line.apiKey, '[REDACTED]');
  t.equal(line.msg, 'calling with uc_[REDACTED] and sk-[REDACTED]');
  t.equal(redactText('key AIzaSyA1234567890'), 'key AIza[REDACTED]');
});

t.test("key-shaped text in a logged object's fields and in errors is masked too", async (t) => {
  const { lines, stream } = capture();
  const logger = createLogger(defaults, stream);
  const fields = { provider: 'custom', err: 'upstream said: invalid key sk-proj-abcdef123456' };
  logger.warn(fields, 'stream failed');
  logger.error({ err: new Error('rejected uc_abcdef123456') }, 'request failed');
  t.equal(lines[0]!.err, 'upstream said: invalid key sk-[REDACTED]');
  t.equal(lines[0]!.provider, 'custom');
  t.equal(fields.err, 'upstream said: invalid key sk-proj-abcdef123456', "the caller's object is not changed");
  t.equal(lines[1]!.err.message, 'rejected uc_[REDACTED]');
  t.notMatch(lines[1]!.err.stack, /uc_abcdef/);
});

t.test('key-shaped text is masked at any depth: failure lists and logged request bodies', async (t) => {
  const { lines, stream } = capture();
  const logger = createLogger(defaults, stream);
  const detail = [{ provider: 'custom', status: 503, message: 'invalid key sk-proj-abcdef123456' }];
  const request = { model: 'm', messages: [{ role: 'user', content: 'my key is AIzaSyA1234567890, valid?' }] };
  logger.error({ detail, request }, 'request failed');
  t.equal(lines[0]!.detail[0].message, 'invalid key sk-[REDACTED]');
  t.equal(lines[0]!.request.messages[0].content, 'my key is AIza[REDACTED], valid?');
  t.equal(detail[0]!.message, 'invalid key sk-proj-abcdef123456', "the caller's objects are not changed");
  t.equal(request.messages[0]!.content, 'my key is AIzaSyA1234567890, valid?');
});

t.test('with anonymization on, no e-mail address, phone number or user id reaches a line', async (t) => {
  const anonymizer = new Anonymizer({ enabled: true, fields: [], key: Buffer.alloc(32, 3) });
  anonymizeLogs(anonymizer);
  t.teardown(() => anonymizeLogs(undefined));
  const { lines, stream } = capture();
  const logger = createLogger(defaults, stream);
  const request = { model: 'gpt-4o', user: 'alice-7', metadata: { user_id: 'u-991' }, messages: [{ role: 'user', content: 'Write to bob@example.org or call +1 555 123 4567' }] };
  logger.info({ requestId: '550e8400-e29b-41d4-a716-446655440000', request }, 'request');
  logger.warn('refused for carol@example.net');
  logger.error({ err: new Error('upstream said: unknown user dave@example.com') }, 'request failed');
  const all = JSON.stringify(lines);
  for (const secret of ['bob@example.org', '555 123 4567', 'alice-7', 'u-991', 'carol@example.net', 'dave@example.com']) t.notOk(all.includes(secret), `no ${secret}`);
  t.equal(lines[0]!.request.user, anonymizer.pseudonym('alice-7'), 'the user as its pseudonym: lines still group by user');
  t.equal(lines[0]!.requestId, '550e8400-e29b-41d4-a716-446655440000', 'ids stay');
  t.equal(request.user, 'alice-7', "the caller's object is not changed");
  anonymizeLogs(new Anonymizer({ enabled: false, fields: [], key: Buffer.alloc(32, 3) }));
  logger.info({ request }, 'request');
  t.equal(lines.at(-1)!.request.user, 'alice-7', 'MODELGATE_ANONYMIZATION_ENABLED=false: as it was');
});

t.test('lines with bodies: strings cut at 256 KB, and while 64 wait, bodies left out (memory stays bounded)', async (t) => {
  const { lines, stream } = capture();
  const logger = createLogger(defaults, stream);
  const big = 'lorem ipsum '.repeat(50_000);
  for (let i = 0; i < 100; i++) logLarge(logger, { requestId: `big-${i}`, request: { messages: [{ role: 'user', content: big }] } }, 'request');
  await linesWritten();
  const requests = lines.filter((line) => line.msg === 'request');
  t.equal(requests.length, 100, 'every line written');
  const withBodies = requests.filter((line) => line.request);
  t.equal(withBodies.length, 64, 'the first 64 with their bodies');
  t.ok(requests.filter((line) => line.bodies === 'left out').length === 36, 'the rest without');
  const content = withBodies[0]!.request.messages[0].content as string;
  t.equal(content.length, 256 * 1024 + `…[${big.length - 256 * 1024} characters cut]`.length, 'cut at 256 KB, marked');
  t.match(lines.find((line) => line.msg === 'log: bodies left out of request lines, the log is behind'), { level: 'warn' });
});

t.test('the level filters lines', async (t) => {
  const { lines, stream } = capture();
  const logger = createLogger({ ...defaults, MODELGATE_LOG_LEVEL: 'warn' }, stream);
  logger.info('hidden');
  logger.warn('shown');
  t.same(lines.map((l) => l.msg), ['shown']);
  t.equal(lines[0]!.level, 'warn');
});

t.test('MODELGATE_LOG_FILE writes JSON lines to the file, rotated with pino-roll or not', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-log-'));
  const plain = createLogger({ ...defaults, MODELGATE_LOG_FILE: join(dir, 'plain.log'), MODELGATE_LOG_ROTATION: false });
  plain.info({ n: 1 }, 'to a file');
  plain.flush();
  for (let i = 0; i < 100 && !existsSync(join(dir, 'plain.log')); i++) await sleep(20);
  for (let i = 0; i < 100 && !readFileSync(join(dir, 'plain.log'), 'utf8').includes('to a file'); i++) await sleep(20);
  t.match(JSON.parse(readFileSync(join(dir, 'plain.log'), 'utf8').trim()), { msg: 'to a file', n: 1 });

  const rolled = createLogger({ ...defaults, MODELGATE_LOG_FILE: join(dir, 'rolled.log') });
  rolled.info('through the rotating transport');
  // pino-roll numbers the files: rolled.1.log, rolled.2.log, …
  const written = () => readdirSync(dir).filter((name) => name.startsWith('rolled.')).map((name) => readFileSync(join(dir, name), 'utf8')).join('');
  for (let i = 0; i < 200 && !written().includes('rotating transport'); i++) await sleep(25);
  t.match(written(), /through the rotating transport/);
});

t.test('MODELGATE_LOG_ROTATION_SIZE rotates by size; MODELGATE_LOG_ROTATION_COUNT bounds the files, those of an earlier run included', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-roll-'));
  const settings = { ...defaults, MODELGATE_LOG_FILE: join(dir, 'gate.log'), MODELGATE_LOG_ROTATION_SIZE: 1, MODELGATE_LOG_ROTATION_COUNT: 2 };
  const filler = 'x'.repeat(10_000);
  const files = () => readdirSync(dir).filter((name) => /^gate\.\d+\.log$/.test(name)).sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1]));
  for (const run of [1, 2]) {
    const logger = createLogger(settings);
    const retention = new LogRetention(settings.MODELGATE_LOG_FILE, 90, 2, createLogger({ ...defaults, MODELGATE_LOG_LEVEL: 'silent' }));
    // The transport's worker thread is up once a first line arrives.
    logger.info({ run }, 'first line');
    const first = () => files().some((name) => readFileSync(join(dir, name), 'utf8').includes(`"run":${run},"msg":"first line"`));
    for (let i = 0; i < 400 && !first(); i++) await sleep(25);
    // 4 MB per run, 500 KB at a time (pino-roll looks at the size after each write it makes).
    for (let i = 0; i < 400; i++) {
      logger.info({ run, i, filler }, 'filling');
      if (i % 50 === 49) await sleep(50);
    }
    logger.info({ run }, 'last line');
    const last = () => files().some((name) => readFileSync(join(dir, name), 'utf8').includes(`"run":${run},"msg":"last line"`));
    for (let i = 0; i < 400 && !last(); i++) await sleep(25);
    t.ok(last(), `run ${run}: the last line was written`);
    // pino-roll removes the files this process rotated beyond the count, just after a rotation;
    // the retention sweep (at start, then hourly) those an earlier run left.
    for (let i = 0; i < 40 && files().length > 3 + (run === 1 ? 0 : 2); i++) await sleep(50);
    t.ok(files().length <= 3 + (run === 1 ? 0 : 2), `run ${run}: pino-roll keeps 2 rotated files of its own (${files().join(', ')})`);
    await retention.sweep();
    t.ok(files().length >= 2, `run ${run}: rotated (${files().join(', ')})`);
    t.ok(files().length <= 3, `run ${run}: at most 2 rotated files and the one written (${files().join(', ')})`);
    // A file rotates once a write took it to 1 MB (it overshoots by up to that write).
    for (const name of files().slice(0, -1)) {
      const size = statSync(join(dir, name)).size;
      t.ok(size >= 1_048_576 && size < 2_100_000, `${name} was rotated at 1 MB (${size} bytes)`);
    }
    (logger as unknown as { flush(): void }).flush();
  }
});

t.test('MODELGATE_LOG_RETENTION deletes rotated files older than the retention, never the one written', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-retention-'));
  const file = join(dir, 'gate.log');
  const now = Date.now();
  const day = 86_400_000;
  const make = (name: string, ageDays: number) => {
    writeFileSync(join(dir, name), 'line\n');
    utimesSync(join(dir, name), new Date(now - ageDays * day), new Date(now - ageDays * day));
  };
  make('gate.1.log', 40);
  make('gate.2.log', 31);
  make('gate.3.log', 5);
  make('gate.2026-01-02.4.log', 35);
  make('other.1.log', 100);
  make('gate.log.bak', 100);
  const sweeper = new LogRetention(file, 30, 5, createLogger({ ...defaults, MODELGATE_LOG_LEVEL: 'silent' }));
  t.same((await sweeper.sweep(now)).sort(), ['gate.1.log', 'gate.2.log', 'gate.2026-01-02.4.log']);
  t.same(readdirSync(dir).sort(), ['gate.3.log', 'gate.log.bak', 'other.1.log'], 'younger and unrelated files stay');
  // The file being written (the newest) stays however old: the process has been idle that long.
  make('gate.3.log', 400);
  t.same(await sweeper.sweep(now), []);
  t.ok(existsSync(join(dir, 'gate.3.log')));
  // Beyond MODELGATE_LOG_ROTATION_COUNT (earlier runs' files): the oldest go first.
  for (let n = 5; n <= 9; n++) make(`gate.${n}.log`, 10 - n);
  const counted = new LogRetention(file, 30, 2, createLogger({ ...defaults, MODELGATE_LOG_LEVEL: 'silent' }));
  t.same((await counted.sweep(now)).sort(), ['gate.3.log', 'gate.5.log', 'gate.6.log']);
  t.same(readdirSync(dir).filter((name) => name.startsWith('gate.')).sort(), ['gate.7.log', 'gate.8.log', 'gate.9.log', 'gate.log.bak']);
});

t.test('per-request lines: metadata, bodies only when asked, timings, and no key', async (t) => {
  const upstream = await startFakeOpenAI();
  t.teardown(() => upstream.close());
  const gateway = await startGateway({
    ...PROTOCOL_ONLY,
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_LOG_REQUESTS: 'true',
    MODELGATE_LOG_RESPONSES: 'true',
    MODELGATE_LOG_PERFORMANCE: 'true',
  });
  t.teardown(() => gateway.close());
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello logs' }] });
  const ok = await call(gateway.url, '/chat/completions', { body, headers: { 'x-request-id': 'log-test-1' } });
  const refused = await call(gateway.url, '/chat/completions', { body, key: 'uc_wrong_key_123' });
  t.equal(ok.status, 200);
  t.equal(refused.status, 401);
  for (let i = 0; i < 50 && gateway.logs.filter((l) => l.msg === 'request').length < 2; i++) await sleep(20);
  const line = gateway.logs.find((l) => l.msg === 'request' && l.requestId === 'log-test-1') as Record<string, any>;
  t.match(line, { status: 200, method: 'POST', path: '/v1/chat/completions', provider: 'openai', routedModel: 'gpt-4o-mini', attempts: 1 });
  t.match(line.request, { messages: [{ content: 'hello logs' }] }, 'the request body with MODELGATE_LOG_REQUESTS');
  t.match(line.response, { choices: [{ message: { content: 'The capital of France is Paris.' } }] }, 'the response with MODELGATE_LOG_RESPONSES');
  t.type(line.upstreamMs, 'number');
  t.type(line.overheadMs, 'number');
  // Each pipeline step's own time, in pipeline order; the step that calls the upstream includes it.
  const stages = Object.keys(line.stagesMs);
  t.ok(stages.indexOf('auth') !== -1 && stages.indexOf('auth') < stages.indexOf('failover'), `stages in pipeline order: ${stages.join(', ')}`);
  t.ok(Object.values(line.stagesMs).every((ms) => typeof ms === 'number' && ms >= 0), 'each a time in ms');
  t.match(gateway.logs.find((l) => l.msg === 'request refused'), { status: 401, code: 'invalid_api_key' }, 'errors per MODELGATE_LOG_ERRORS');
  const all = JSON.stringify(gateway.logs);
  t.notOk(all.includes(GATEWAY_KEY) || all.includes('uc_wrong_key_123') || all.includes(PROVIDER_KEYS.openai), 'no key in any line');
});

t.test('failures are logged once each by the server, and not at all with MODELGATE_LOG_ERRORS=false', async (t) => {
  const upstream = await startFakeOpenAI();
  t.teardown(() => upstream.close());
  for (const logErrors of ['true', 'false']) {
    const env = { ...PROTOCOL_ONLY, OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_RETRIES: '0', MODELGATE_LOG_ERRORS: logErrors };
    const blocking = await startGateway({ ...env, MODELGATE_BLOCKED_IPS: '127.0.0.1' });
    t.teardown(() => blocking.close());
    t.equal((await call(blocking.url, '/models')).status, 403);

    const gateway = await startGateway(env);
    t.teardown(() => gateway.close());
    upstream.next(sse(fixture('openai/stream-error.sse'), { delayMs: 250 }));
    const streamed = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
    t.equal(streamed.status, 200);
    upstream.next(json(500, { error: { message: 'upstream broke' } }));
    const failed = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }) });
    t.equal(failed.status, 503);
    await sleep(50);

    const lines = [...blocking.logs, ...gateway.logs].filter((line) => (line.level === 'warn' || line.level === 'error') && !String(line.msg).startsWith('redis'));
    if (logErrors === 'false') {
      t.same(lines.map((line) => line.msg), [], 'nothing with MODELGATE_LOG_ERRORS=false');
      continue;
    }
    t.same(lines.map((line) => line.msg).sort(), ['request failed', 'request refused', 'stream failed after the first byte'], 'one line per failure');
    t.match(lines.find((line) => line.msg === 'request refused'), { status: 403, code: 'ip_not_allowed', clientIp: '127.0.0.1', detail: /blocked/ });
    t.match(lines.find((line) => line.msg === 'stream failed after the first byte'), { status: 200, provider: 'openai', reason: 'stream_error' });
    t.match(lines.find((line) => line.msg === 'request failed'), { status: 503, detail: [{ provider: 'openai', message: 'upstream broke' }] });
  }
});

t.end();

t.test('review: a numeric request id stays; a cycle does not hang the hook; nothing is prepared at a level that writes nothing', async (t) => {
  const anonymizer = new Anonymizer({ enabled: true, fields: [], key: Buffer.alloc(32, 4) });
  anonymizeLogs(anonymizer);
  t.teardown(() => anonymizeLogs(undefined));
  const { lines, stream } = capture();
  const logger = createLogger(defaults, stream);
  logger.info({ requestId: '9073518264', note: 'call 5551234567' }, 'numbers');
  logLarge(logger, { requestId: '9073518265', request: { content: 'call 5551234567' } }, 'request');
  await linesWritten();
  t.equal(lines[0]!.requestId, '9073518264');
  t.equal(lines[0]!.note, `call ${anonymizer.pseudonym('5551234567')}`);
  t.equal(lines[1]!.requestId, '9073518265');
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  cyclic.again = cyclic;
  logger.info({ cyclic }, 'cycle');
  t.equal(lines.at(-1)!.msg, 'cycle', 'written, not hung');
  const quiet = createLogger({ ...defaults, MODELGATE_LOG_LEVEL: 'warn' }, capture().stream);
  logLarge(quiet, { request: { content: 'x'.repeat(1000) } }, 'request');
  await linesWritten();
  t.pass('nothing waits at warn');
});
