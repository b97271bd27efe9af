// Anonymization end to end through the real gateway: with request, response and error logging on
// and the log written to a rotating file, no e-mail address, phone number or user id from a
// request reaches the log file (grepped), while the provider still gets the body as sent; with
// MODELGATE_ANONYMIZE_UPSTREAM the provider gets pseudonyms instead. A provider error quoting the
// address is anonymized in the log too.
import t from 'tap';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../core/app.js';
import { startGateway, call, GATEWAY_KEY, PROTOCOL_ONLY } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { FakeProvider, json, sleep } from '../helpers/fake-provider.js';

const EMAIL = 'maria.lopez@example.com';
const PHONE = '+34 612 345 678';
const USER = 'customer-8812';
const body = (content: string) => JSON.stringify({ model: 'gpt-4o-mini', user: USER, metadata: { user_id: 'u-5531' }, messages: [{ role: 'user', content }] });

/** A gateway that logs as configured (MODELGATE_LOG_FILE), not to the test's capture. */
async function fileLoggingGateway(env: Record<string, string>): Promise<{ url: string; close(): Promise<void> }> {
  const app = await createApp({ MODELGATE_API_KEY: GATEWAY_KEY, MODELGATE_PORT: '0', MODELGATE_HOST: '127.0.0.1', MODELGATE_DATA_DIR: mkdtempSync(join(tmpdir(), 'modelgate-anon-data-')), ...env });
  return { url: await app.listen(), close: () => app.close() };
}

function logText(dir: string): string {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.log'))
    .map((name) => readFileSync(join(dir, name), 'utf8'))
    .join('');
}

t.test('the log file holds no address, phone number or user id; the provider gets the body as sent', async (t) => {
  const upstream = await startFakeOpenAI();
  t.teardown(() => upstream.close());
  const failing = await FakeProvider.start(json(400, { error: { message: `Unknown account ${EMAIL}`, type: 'invalid_request_error' } }));
  t.teardown(() => failing.close());
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-anon-logs-'));
  const common = {
    ...PROTOCOL_ONLY,
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    MODELGATE_CACHE_ENABLED: 'false',
    MODELGATE_LOG_REQUESTS: 'true',
    MODELGATE_LOG_RESPONSES: 'true',
    MODELGATE_LOG_FILE: join(dir, 'gateway.log'),
  };
  const gateway = await fileLoggingGateway({ ...common, OPENAI_BASE_URL: `${upstream.url}/v1` });
  const content = `Call me on ${PHONE} or mail ${EMAIL}, about the capital of France.`;
  const ok = await call(gateway.url, '/chat/completions', { body: body(content), headers: { 'x-request-id': 'anon-ok' } });
  t.equal(ok.status, 200);
  t.equal(upstream.requests.at(-1)!.json.messages[0].content, content, 'forwarded as sent');
  t.equal(upstream.requests.at(-1)!.json.user, USER);
  await gateway.close();

  const broken = await fileLoggingGateway({ ...common, OPENAI_BASE_URL: `${failing.url}/v1`, MODELGATE_FAILOVER_ENABLED: 'false' });
  const refused = await call(broken.url, '/chat/completions', { body: body(content) });
  t.equal(refused.status, 400);
  await broken.close();

  let text = '';
  for (let i = 0; i < 200 && !(text.includes('anon-ok') && text.includes('Unknown account')); i++) {
    await sleep(25);
    text = logText(dir);
  }
  t.match(text, /"requestId":"anon-ok"/, 'the request line was written');
  t.match(text, /Unknown account anon_[0-9a-f]{16}/, "the provider's error message, anonymized");
  for (const plain of [EMAIL, PHONE, '612 345 678', USER, 'u-5531']) t.notOk(text.includes(plain), `no ${plain} in the log file`);
  t.match(text, /Call me on anon_[0-9a-f]{16} or mail anon_[0-9a-f]{16}/, 'the body, with pseudonyms');
});

t.test('MODELGATE_ANONYMIZE_UPSTREAM: the provider gets pseudonyms; with anonymization off, logs say it as sent', async (t) => {
  const upstream = await startFakeOpenAI();
  t.teardown(() => upstream.close());
  const gateway = await startGateway({
    ...PROTOCOL_ONLY,
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_ANONYMIZE_UPSTREAM: 'true',
  });
  t.teardown(() => gateway.close());
  const ok = await call(gateway.url, '/chat/completions', { body: body(`mail ${EMAIL}`) });
  t.equal(ok.status, 200);
  const sent = upstream.requests.at(-1)!.json;
  t.match(sent.messages[0].content, /^mail anon_[0-9a-f]{16}$/);
  t.match(sent.user, /^anon_[0-9a-f]{16}$/);
  t.match(sent.metadata.user_id, /^anon_[0-9a-f]{16}$/);
  t.equal(sent.model, 'gpt-4o-mini');

  const plain = await startGateway({
    ...PROTOCOL_ONLY,
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    MODELGATE_ANONYMIZATION_ENABLED: 'false',
    MODELGATE_ANONYMIZE_UPSTREAM: 'true',
    MODELGATE_LOG_REQUESTS: 'true',
  });
  t.teardown(() => plain.close());
  await call(plain.url, '/chat/completions', { body: body(`mail ${EMAIL}`), headers: { 'x-request-id': 'anon-off' } });
  t.equal(upstream.requests.at(-1)!.json.messages[0].content, `mail ${EMAIL}`, 'anonymization off: nothing to forward anonymized');
  for (let i = 0; i < 100 && !plain.logs.some((line) => line.requestId === 'anon-off'); i++) await sleep(20);
  t.equal((plain.logs.find((line) => line.requestId === 'anon-off') as any)?.request.user, USER, 'anonymization off: the log as sent');
});

t.test('review: MODELGATE_ANONYMIZE_UPSTREAM keeps tool-call arguments and tools as sent, validates as sent, bounds the grown body', async (t) => {
  const upstream = await startFakeOpenAI();
  t.teardown(() => upstream.close());
  const gateway = await startGateway({ ...PROTOCOL_ONLY, OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_ANONYMIZE_UPSTREAM: 'true', MODELGATE_MAX_BODY_SIZE: '0.05' });
  t.teardown(() => gateway.close());
  const args = '{"order_id":1234567890,"email":"x@y.co"}';
  const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { phone: { type: 'string', description: 'e.g. 555 123 4567' } } } } }];
  const ok = await call(gateway.url, '/chat/completions', {
    body: JSON.stringify({
      model: 'gpt-4o-mini',
      tools,
      messages: [
        { role: 'user', content: 'mail x@y.co' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: args } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'found 5551234567' },
      ],
    }),
  });
  t.equal(ok.status, 200);
  const sent = upstream.requests.at(-1)!.json;
  t.equal(sent.messages[1].tool_calls[0].function.arguments, args, 'arguments as sent: valid JSON');
  t.same(sent.tools, tools, 'tools as sent');
  t.match(sent.messages[0].content, /^mail anon_[0-9a-f]{16}$/);
  t.match(sent.messages[2].content, /^found anon_[0-9a-f]{16}$/);
  const bad = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ model: 'gpt-4o-mini', user: 123, messages: [{ role: 'user', content: 'hi' }] }) });
  t.equal(bad.status, 400, 'user: 123 is refused as sent');
  // 40 KB of addresses (under the 52 KB limit) grow past it once each is a pseudonym.
  const grown = await call(gateway.url, '/chat/completions', { body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'a@b.co '.repeat(5800) }] }) });
  t.equal(grown.status, 413);
});
