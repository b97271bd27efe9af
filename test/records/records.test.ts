// Request records end to end, on SQLite and PostgreSQL: a chat request through the real gateway
// (OpenAI SDK as client, a fake OpenAI upstream) whose body holds an e-mail address, a phone number
// and `user: "alice"` is recorded; the admin API shows it decrypted and anonymized, lists and
// filters it (by the raw user, matched by pseudonym), refuses non-admin keys and bad parameters; and
// neither the database file (with its WAL) nor the PostgreSQL rows hold the body, the address or
// the phone number in plain text.
import t from 'tap';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { startGateway, call, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { ENGINES, TEST_DATABASE_URL, engineEnv } from '../helpers/database.js';
import type { FakeProvider } from '../helpers/fake-provider.js';
import type { KeyStore } from '../../core/key-store.js';

const USER_KEY = 'uc_records_user_0123456789';
const nonAdmin: KeyStore = { verify: (secret) => (secret === USER_KEY ? { keyId: 'key_plain', tenant: 'acme', admin: false } : undefined) };
const EMAIL = 'alice.smith@example.com';
const PHONE = '+1 415 555 0134';
const MARKER = 'zebra-marker-5521';
const ANSWER = 'The capital of France is Paris.';

let upstream: FakeProvider;
t.before(async () => {
  upstream = await startFakeOpenAI();
});
t.teardown(() => upstream.close());

/** Waits until the gateway's writer has stored `n` records (it writes every second; flush hurries it). */
async function records(gateway: TestGateway, n: number): Promise<any[]> {
  for (let i = 0; i < 100; i++) {
    await gateway.app.records.writer!.flush();
    const page = await call(gateway.url, '/admin/requests?limit=100');
    if (page.status === 200 && page.json.data.length >= n) return page.json.data;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`fewer than ${n} records were written`);
}

for (const engine of ENGINES) {
  t.test(`${engine}: a recorded request, decrypted and anonymized through the admin API, and nothing plain in the database`, async (t) => {
    const env = engineEnv(engine);
    const gateway = await startGateway(
      {
        ...env,
        OPENAI_API_KEY: PROVIDER_KEYS.openai,
        OPENAI_BASE_URL: `${upstream.url}/v1`,
        MODELGATE_RETRIES: '0',
        MODELGATE_CACHE_ENABLED: 'false',
        MODELGATE_REQUEST_RECORDS: 'true',
      },
      { keyStores: [nonAdmin] },
    );
    t.teardown(() => gateway.close());
    const client = gateway.client();
    const content = `${MARKER}: write to ${EMAIL} or call ${PHONE} about the capital of France.`;
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], user: 'alice' });
    t.equal(completion.choices[0]!.message.content, ANSWER);
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'stream please' }], stream: true, user: 'bob' });
    let streamed = '';
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.content ?? '';

    const listed = await records(gateway, 2);
    t.equal(listed.length, 2);
    t.equal(listed[0].stream, true, 'newest first: the stream');
    const summary = listed[1];
    t.match(summary, {
      object: 'request_record',
      id: /^rec_[0-9a-f]{32}$/,
      key_id: 'bootstrap',
      api: 'chat',
      model: 'gpt-4o-mini',
      provider: 'openai',
      status: 200,
      error_code: null,
      usage: { prompt_tokens: completion.usage!.prompt_tokens, completion_tokens: completion.usage!.completion_tokens },
      stream: false,
      user: /^anon_[0-9a-f]{16}$/,
      encryption_key: /^m30d\d+$/,
      truncated: { request: false, response: false },
    });
    t.notOk('bodies' in summary, 'the list carries no bodies');
    t.ok(summary.latency_ms >= 0);

    const one = await call(gateway.url, `/admin/requests/${summary.id}`);
    t.equal(one.status, 200);
    t.equal(one.json.decrypt_error, null);
    const request = one.json.bodies.request;
    t.equal(request.model, 'gpt-4o-mini');
    t.equal(request.user, summary.user, 'the body holds the same pseudonym as the metadata');
    const stored = request.messages[0].content as string;
    t.match(stored, MARKER, 'what is not personal stays readable');
    t.notMatch(stored, EMAIL);
    t.notMatch(stored, '555');
    t.equal((stored.match(/anon_[0-9a-f]{16}/g) ?? []).length, 2, 'the address and the number became pseudonyms');
    t.equal(one.json.bodies.response.choices[0].message.content, ANSWER);
    const streamedRecord = await call(gateway.url, `/admin/requests/${listed[0].id}`);
    t.same(streamedRecord.json.bodies.response, { text: streamed }, 'a stream is recorded as its assembled text');

    // Filters: the raw user, matched by its pseudonym; status, model, key, time.
    const byUser = await call(gateway.url, '/admin/requests?user=alice');
    t.same(byUser.json.data.map((r: any) => r.id), [summary.id]);
    t.same((await call(gateway.url, '/admin/requests?user=carol')).json.data, []);
    t.equal((await call(gateway.url, '/admin/requests?status=200&model=gpt-4o-mini&key_id=bootstrap')).json.data.length, 2);
    t.equal((await call(gateway.url, '/admin/requests?status=500')).json.data.length, 0);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    t.equal((await call(gateway.url, `/admin/requests?start=${future}`)).json.data.length, 0);
    t.equal((await call(gateway.url, `/admin/requests?end=${future}&start=2020-01-01`)).json.data.length, 2);
    // Pagination: one per page, the cursor walks to the older one.
    const first = await call(gateway.url, '/admin/requests?limit=1');
    t.match(first.json, { has_more: true, first_id: listed[0].id, last_id: listed[0].id });
    const second = await call(gateway.url, `/admin/requests?limit=1&after=${first.json.last_id}`);
    t.match(second.json, { has_more: false, data: [{ id: summary.id }] });

    // Refusals: a non-admin key, bad parameters (400 naming them), an unknown id (404).
    for (const path of ['/admin/requests', `/admin/requests/${summary.id}`]) {
      const refused = await call(gateway.url, path, { key: USER_KEY });
      t.equal(refused.status, 403);
      t.equal(refused.json.error.code, 'admin_required');
    }
    for (const [query, param] of [['limit=0', 'limit'], ['limit=101', 'limit'], ['start=yesterday', 'start'], ['end=2026-13-45', 'end'], ['status=abc', 'status'], ['after=rec_nope', 'after'], [`after=rec_${'0'.repeat(32)}`, 'after'], ['start=2026-02-01&end=2026-01-01', 'end']]) {
      const bad = await call(gateway.url, `/admin/requests?${query}`);
      t.equal(bad.status, 400, query);
      t.equal(bad.json.error.param, param, query);
    }
    t.equal((await call(gateway.url, `/admin/requests/rec_${'0'.repeat(32)}`)).status, 404);
    const unknown = await call(gateway.url, '/admin/requests/whatever');
    t.match(unknown, { status: 404, json: { error: { code: 'record_not_found', param: 'id' } } });

    // The raw storage: no plaintext body, address, phone number or answer anywhere.
    const forbidden = [MARKER, EMAIL, 'alice.smith', '415 555 0134', '4155550134', ANSWER, 'capital of France'];
    if (engine === 'sqlite') {
      const dir = env.MODELGATE_DATA_DIR!;
      const files = readdirSync(dir).filter((name) => name.startsWith('modelgate.db'));
      t.ok(files.includes('modelgate.db'));
      for (const name of files) {
        const bytes = readFileSync(join(dir, name));
        for (const text of forbidden) t.equal(bytes.indexOf(Buffer.from(text)), -1, `${name} does not hold "${text}"`);
        t.equal(bytes.indexOf(Buffer.from('alice')), -1, `${name} does not hold the user`);
      }
      t.ok(existsSync(join(dir, 'encryption-master.key')), 'the embedded key file was created');
    } else {
      const pgClient = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await pgClient.connect();
      t.teardown(() => pgClient.end());
      const rows = await pgClient.query(`select row_to_json(r)::text as row from "${env.MODELGATE_DATABASE_SCHEMA}".request_records r`);
      t.equal(rows.rows.length, 2);
      const all = rows.rows.map((row) => row.row as string).join('\n');
      for (const text of [...forbidden, 'alice']) t.notMatch(all, text, `no PostgreSQL row holds "${text}"`);
      t.match(all, /"request_body":"v1\.m30d\d+\./, 'the bodies are envelopes');
    }
  });
}

t.test('records off: no observer, nothing written, the admin list answers empty', async (t) => {
  const gateway = await startGateway({ OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_CACHE_ENABLED: 'false' });
  t.teardown(() => gateway.close());
  t.equal(gateway.app.records.writer, undefined);
  t.equal(gateway.app.records.observer, undefined);
  await gateway.client().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  const page = await call(gateway.url, '/admin/requests');
  t.same(page.json, { object: 'list', data: [], first_id: null, last_id: null, has_more: false });
});

t.test('embeddings, the Responses API and a refusal are recorded too; the error message is sealed', async (t) => {
  const gateway = await startGateway({
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_RETRIES: '0',
    MODELGATE_CACHE_ENABLED: 'false',
    MODELGATE_REQUEST_RECORDS: 'true',
  });
  t.teardown(() => gateway.close());
  const client = gateway.client();
  await client.embeddings.create({ model: 'text-embedding-3-small', input: ['one', 'two'], user: 'carol' });
  await client.responses.create({ model: 'gpt-4o-mini', input: `reach me at ${EMAIL}`, store: false });
  const refused = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ model: 'no-such-model-xyz', messages: [{ role: 'user', content: `call ${PHONE}` }] }) });
  t.equal(refused.status, 404);
  const [error, responses, embeddings] = await records(gateway, 3);
  t.match(embeddings, { api: 'embeddings', model: 'text-embedding-3-small', status: 200, user: gateway.app.anonymizer.pseudonym('carol') });
  const embedded = await call(gateway.url, `/admin/requests/${embeddings.id}`);
  t.match(embedded.json.bodies.response, { object: 'list', embeddings: 2 }, 'a summary, not the vectors');
  t.same(embedded.json.bodies.request.input, ['one', 'two']);
  t.match(responses, { api: 'responses', status: 200 });
  const answered = await call(gateway.url, `/admin/requests/${responses.id}`);
  t.match(answered.json.bodies.request.input, /^reach me at anon_[0-9a-f]{16}$/, "the client's own Responses request, anonymized");
  t.match(error, { status: 404, error_code: refused.json.error.code, provider: null });
  const failed = await call(gateway.url, `/admin/requests/${error.id}`);
  t.type(failed.json.bodies.error_message, 'string');
  t.notMatch(failed.json.bodies.request.messages[0].content, '555');
  t.equal(gateway.app.records.writer!.dropped, 0);
});
