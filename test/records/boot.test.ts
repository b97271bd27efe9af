// What the start says about record encryption: any cipher but AES-256-GCM is refused by name; prod
// with records on and no key stops with a message saying what to set; the embedded default creates
// a 0600 key file in the data directory, warns, and a restart reuses it (old records still decrypt);
// a keyring or master key never appears in a log line or an answer.
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, statSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { startGateway, call } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { ConfigError } from '../../core/config.js';
import { MASTER_KEY_FILE } from '../../core/records/keyring.js';

const dataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-records-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

t.test('a cipher other than AES-256-GCM is refused at boot, by name', async (t) => {
  for (const value of ['AES-128-CBC', 'aes-256-gcm', 'ChaCha20-Poly1305']) {
    await t.rejects(startGateway({ MODELGATE_ENCRYPTION_ALGORITHM: value }), { name: 'ConfigError', message: new RegExp(`MODELGATE_ENCRYPTION_ALGORITHM: must be one of AES-256-GCM \\(got "${value}"\\)`) });
  }
  const bad = await startGateway({ MODELGATE_ENCRYPTION_KEYS: 'a:short' }).catch((error: unknown) => error);
  t.ok(bad instanceof ConfigError);
  t.match((bad as Error).message, /MODELGATE_ENCRYPTION_KEYS: must be `id:base64key` entries/);
  t.notMatch((bad as Error).message, 'short', 'a secret setting is not echoed');
});

t.test('prod with records on and no key refuses to start; with a key it starts', async (t) => {
  const dir = dataDir();
  const env = { MODELGATE_ENV: 'prod', MODELGATE_DATA_DIR: dir, MODELGATE_REQUEST_RECORDS: 'true' };
  await t.rejects(startGateway(env), { name: 'ConfigError', message: /request records are on \(MODELGATE_REQUEST_RECORDS\) and no key is configured; in prod set MODELGATE_ENCRYPTION_MASTER_KEY/ });
  t.notOk(readdirSync(dir).includes(MASTER_KEY_FILE), 'no key file made in prod');
  const master = randomBytes(32).toString('base64');
  const gateway = await startGateway({ ...env, MODELGATE_ENCRYPTION_MASTER_KEY: master });
  t.teardown(() => gateway.close());
  t.notMatch(JSON.stringify(gateway.logs), master.slice(0, 20), 'the master key is never logged');
  // Records off in prod need no key.
  const off = await startGateway({ MODELGATE_ENV: 'prod', MODELGATE_DATA_DIR: dataDir() });
  t.teardown(() => off.close());
});

t.test('the embedded default: a 0600 key file, a warning, and a restart that reuses it', async (t) => {
  const upstream = await startFakeOpenAI();
  t.teardown(() => upstream.close());
  const dir = dataDir();
  const env = { MODELGATE_DATA_DIR: dir, MODELGATE_REQUEST_RECORDS: 'true', OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_CACHE_ENABLED: 'false' };
  const first = await startGateway(env);
  const file = join(dir, MASTER_KEY_FILE);
  t.equal(statSync(file).mode & 0o777, 0o600);
  const key = readFileSync(file, 'utf8');
  t.ok(first.logs.some((line) => line.level === 'warn' && /master key was created in the data directory/.test(String(line.msg))), 'warned');
  t.notMatch(JSON.stringify(first.logs), key.trim().slice(0, 20), 'the key is never logged');
  await first.client().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'remember me' }], user: 'alice' });
  await first.close();

  const second = await startGateway(env);
  t.teardown(() => second.close());
  t.equal(readFileSync(file, 'utf8'), key, 'the file is not rewritten');
  t.notOk(second.logs.some((line) => /master key was created/.test(String(line.msg))), 'no second key');
  const list = await call(second.url, '/admin/requests');
  t.equal(list.json.data.length, 1, 'the first run wrote its record on close');
  const record = await call(second.url, `/admin/requests/${list.json.data[0].id}`);
  t.equal(record.json.decrypt_error, null, 'decrypts after the restart');
  t.equal(record.json.bodies.request.messages[0].content, 'remember me');
  t.equal(list.json.data[0].user, second.app.anonymizer.pseudonym('alice'), 'pseudonyms survive the restart');
  // The keys never show in an answer.
  t.notMatch(record.text, key.trim().slice(0, 20));
});
