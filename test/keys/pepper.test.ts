// The pepper: keys survive a restart under the same one, and are unknown under another; unset, it is
// derived from MODELGATE_API_KEY (so changing that key has the same effect), and an operator with
// keys is warned at boot.
import t from 'tap';
import { startGateway, call } from '../helpers/gateway.js';
import { testDataDir } from '../helpers/database.js';

const PEPPER = 'a-pepper-of-at-least-32-characters-0123';

t.test('a key survives a restart under the same pepper, and is unknown under another', async (t) => {
  const dir = testDataDir();
  const first = await startGateway({ MODELGATE_DATA_DIR: dir, MODELGATE_API_KEY_PEPPER: PEPPER });
  const created = (await call(first.url, '/admin/keys', { body: JSON.stringify({ name: 'durable' }) })).json;
  await first.close();

  const same = await startGateway({ MODELGATE_DATA_DIR: dir, MODELGATE_API_KEY_PEPPER: PEPPER, MODELGATE_API_KEY: 'uc_another_bootstrap_key_0123' });
  t.equal((await call(same.url, '/models', { key: created.key })).status, 200, 'same pepper: the key works after a restart, whatever the bootstrap key');
  await same.close();

  const other = await startGateway({ MODELGATE_DATA_DIR: dir, MODELGATE_API_KEY_PEPPER: `${PEPPER}-rotated` });
  const refused = await call(other.url, '/models', { key: created.key });
  t.equal(refused.status, 401);
  t.equal(refused.json.error.message, 'Invalid API key', 'another pepper: unknown');
  await other.close();
});

t.test('without a pepper, the bootstrap key derives it', async (t) => {
  const dir = testDataDir();
  const first = await startGateway({ MODELGATE_DATA_DIR: dir });
  const created = (await call(first.url, '/admin/keys', { body: JSON.stringify({ name: 'derived' }) })).json;
  t.equal((await call(first.url, '/models', { key: created.key })).status, 200);
  await first.close();
  const changed = await startGateway({ MODELGATE_DATA_DIR: dir, MODELGATE_API_KEY: 'uc_another_bootstrap_key_0123' });
  t.equal((await call(changed.url, '/models', { key: created.key })).status, 401, 'a new bootstrap key makes the stored keys unknown');
  await changed.close();
});

t.test('keys without a pepper: a warning at boot; no keys, or a pepper: none', async (t) => {
  const warned = (logs: Array<Record<string, unknown>>) => logs.filter((line) => line.level === 'warn' && String(line.msg).includes('MODELGATE_API_KEY_PEPPER is not set'));
  const dir = testDataDir();
  const empty = await startGateway({ MODELGATE_DATA_DIR: dir });
  t.same(warned(empty.logs), [], 'no keys yet: nothing to say');
  await call(empty.url, '/admin/keys', { body: JSON.stringify({ name: 'k' }) });
  await empty.close();
  const withKeys = await startGateway({ MODELGATE_DATA_DIR: dir });
  t.equal(warned(withKeys.logs).length, 1, 'keys and no pepper: warned once');
  await withKeys.close();
  const short = await startGateway({ MODELGATE_API_KEY_PEPPER: 'short' }).then(
    () => 'started',
    (error: Error) => error.message,
  );
  t.match(short, /MODELGATE_API_KEY_PEPPER/, 'a pepper under 32 characters stops the start, by name');
  t.notMatch(short, /short/, 'without showing it');
});

t.end();
