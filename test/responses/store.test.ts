// The stored responses on both engines: a saved response is readable the moment save() resolves
// (the answer waits for it, so another replica finds it), by its key only, with its output items;
// delete removes both; expired rows are not served and are swept. A database that does not answer
// is a 503 store_unavailable, not a 500.
import t from 'tap';
import pino from 'pino';
import { ENGINES, openTestStore, testDataDir } from '../helpers/database.js';
import { openSqlite } from '../../core/store/database.js';
import { migrate } from '../../core/store/migrate.js';
import { MIGRATIONS } from '../../core/store/migrations/index.js';
import { ResponseStore, type StoredResponse } from '../../core/responses/store.js';
import type { ResponseObject } from '../../core/responses/types.js';
import { isGatewayError } from '../../core/errors.js';

const logger = pino({ level: 'silent' });
const hex = (c: string) => c.repeat(32);

function record(id: string, keyId: string, createdAt = Date.now()): StoredResponse {
  const response = {
    id,
    object: 'response',
    created_at: Math.floor(createdAt / 1000),
    status: 'completed',
    error: null,
    incomplete_details: null,
    model: 'm',
    output: [{ id: `msg_${id.slice(5)}`, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'hi', annotations: [] }] }],
    usage: null,
  } as unknown as ResponseObject;
  return { id, keyId, tenant: 't', createdAt, response, items: [{ role: 'user', content: 'q' }, ...response.output] };
}

for (const engine of ENGINES) {
  t.test(`${engine}: read right after save, per key, items by id, delete, retention`, async (t) => {
    const store = await openTestStore(t, engine, { migrated: true });
    const responses = new ResponseStore(store, 30, logger);
    const id = `resp_${hex('a')}`;
    await responses.save(record(id, 'key-a'));
    t.equal((await responses.get(id, 'key-a'))?.response.id, id, 'readable once save resolved, on any connection');
    t.equal(await responses.get(id, 'key-b'), undefined, "another key's id reads as none");
    t.same([...(await responses.items([`msg_${hex('a')}`, `msg_${hex('f')}`], 'key-a')).keys()], [`msg_${hex('a')}`]);
    t.equal((await responses.items([`msg_${hex('a')}`], 'key-b')).size, 0);
    t.equal(await responses.delete(id, 'key-b'), false);
    t.equal(await responses.delete(id, 'key-a'), true);
    t.equal(await responses.get(id, 'key-a'), undefined);
    t.equal((await responses.items([`msg_${hex('a')}`], 'key-a')).size, 0, 'its items went with it');

    const old = `resp_${hex('b')}`;
    await responses.save(record(old, 'key-a', Date.now() - 31 * 86_400_000));
    t.equal(await responses.get(old, 'key-a'), undefined, 'expired: not served');
    t.equal(await responses.sweep(), 1);
    t.equal((await store.db.selectFrom('response_items').select('item_id').execute()).length, 0, 'expired items swept too');
  });
}

t.test('a database that does not answer: reads are 503 store_unavailable, a failed write is logged and never thrown', async (t) => {
  const store = openSqlite(testDataDir());
  await migrate(store, MIGRATIONS);
  const responses = new ResponseStore(store, 30, logger);
  await store.close();
  await t.resolves(responses.save(record(`resp_${hex('c')}`, 'key-a')));
  for (const read of [() => responses.get(`resp_${hex('c')}`, 'key-a'), () => responses.items([`msg_${hex('c')}`], 'key-a'), () => responses.delete(`resp_${hex('c')}`, 'key-a')]) {
    const error = await read().catch((e: unknown) => e);
    t.ok(isGatewayError(error) && error.status === 503 && error.code === 'store_unavailable', String(error));
  }
});
