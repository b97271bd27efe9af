// Providers quote credentials in their error messages — the key they were sent, a shortened copy of
// it, another key, a token in a URL. None of that may reach the client, /v1/providers/status, the
// provider test endpoint or a log line; the rest of the message, which says what went wrong, must.
import t from 'tap';
import { APIError } from 'openai';
import { startGateway, call, GATEWAY_KEY, PROTOCOL_ONLY, type TestGateway } from '../helpers/gateway.js';
import { anthropicResponder, openAIResponder } from '../helpers/fakes.js';
import { FakeProvider, fixture, gatedSse, json, readUntilFailure } from '../helpers/fake-provider.js';

const ANTHROPIC_KEY = 'sk-ant-api03-Q7wLx2Vb9NcR4tYh8KpZ3mF6dS1gJ0aE';
/** No known prefix: only the gateway's own list of secrets can find it. */
const CUSTOM_KEY = 'vx7Qm2Lp9Rt4Wz8Kd3Hc';
const REDIS_PASSWORD = 'Kd83jLq0-redis';

/** Every string that must not leave the gateway, and what each is. */
const LEAKS: Record<string, string> = {
  [ANTHROPIC_KEY]: 'the anthropic key',
  Q7wLx2Vb: 'part of the anthropic key',
  [CUSTOM_KEY]: 'the custom key',
  vx7Qm2Lp: 'the first 8 characters of the custom key',
  'vx7Q****d3Hc': 'a shortened custom key',
  d3Hc: 'the end of the custom key',
  [REDIS_PASSWORD]: 'the Redis password',
  [GATEWAY_KEY]: "the gateway's own key",
  AIzaSyD4f7Hk2LmQ9xWc3VbN8pRt: 'a Google key in a ?key= URL',
  tok3b9f0c1d2e8a: 'a Bearer token',
  eyJzdWIiOiJnYXRld2F5In0: 'a JWT',
  '9f86d081884c7d659a2feaa0c55ad015': 'a long hex token in quotes',
  Ab12Cd34Ef56Gh78: 'a key pasted into a prompt',
};

function leaked(text: string): string[] {
  return Object.entries(LEAKS)
    .filter(([secret]) => text.includes(secret))
    .map(([, what]) => what);
}

const question = [{ role: 'user' as const, content: 'Hello' }];
let anthropic: FakeProvider;
let custom: FakeProvider;
let gateway: TestGateway;

t.before(async () => {
  [anthropic, custom] = await Promise.all([FakeProvider.start(anthropicResponder(ANTHROPIC_KEY)), FakeProvider.start(openAIResponder(CUSTOM_KEY))]);
  gateway = await startGateway({
    ...PROTOCOL_ONLY,
    ANTHROPIC_API_KEY: ANTHROPIC_KEY,
    ANTHROPIC_BASE_URL: anthropic.url,
    CUSTOM_API_KEY: CUSTOM_KEY,
    CUSTOM_BASE_URL: `${custom.url}/v1`,
    CUSTOM_MODELS: 'local-model',
    MODELGATE_ALLOW_UNPRICED_MODELS: 'true',
    REDIS_PASSWORD,
    MODELGATE_LOG_REQUESTS: 'true',
  });
});
t.after(async () => {
  await gateway.close();
  await Promise.all([anthropic.close(), custom.close()]);
});

/** The client's error, whatever the SDK threw, as text: message and body. */
async function failure(request: Promise<unknown>): Promise<{ status: number | undefined; text: string }> {
  const error = (await request.then(
    () => undefined,
    (caught: unknown) => caught,
  )) as APIError | undefined;
  if (!(error instanceof APIError)) throw new Error(`expected an APIError, got ${String(error)}`);
  return { status: error.status, text: `${error.message} ${JSON.stringify(error.error)}` };
}

t.test('a 401 quoting the key: the client learns the credentials were refused, not the key', async (t) => {
  anthropic.next(json(401, { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key: ${ANTHROPIC_KEY} (also tried vx7Q****d3Hc)` } }));
  const client = await failure(gateway.client().chat.completions.create({ model: 'claude-sonnet-4-5', messages: question }));
  t.equal(client.status, 502);
  t.match(client.text, /rejected the gateway's credentials/);
  t.match(client.text, /invalid x-api-key/, "the provider's words are kept");
  t.same(leaked(client.text), [], 'no secret in the error');

  const status = await call(gateway.url, '/providers/status');
  const last = status.json.data.find((p: { provider: string }) => p.provider === 'anthropic').last_error;
  t.match(last.message, /invalid x-api-key/);
  t.same(leaked(status.text), [], 'no secret in /v1/providers/status');
});

t.test('a 400 quoting the key and other credentials reaches the client with the reason and without them', async (t) => {
  const message =
    `Invalid request for model local-model: token ${CUSTOM_KEY} lacks scope; ` +
    `upstream https://auth.example/check?key=AIzaSyD4f7Hk2LmQ9xWc3VbN8pRt&fmt=json said Bearer tok3b9f0c1d2e8a; ` +
    `session eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJnYXRld2F5In0.c2lnbmF0dXJlX2hlcmU; redis auth '${REDIS_PASSWORD}' failed; ` +
    `trace "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"; caller ${GATEWAY_KEY}`;
  custom.next(json(400, { error: { message, type: 'invalid_request_error', param: 'messages', code: null } }));
  const client = await failure(gateway.client().chat.completions.create({ model: 'local-model', messages: question }));
  t.equal(client.status, 400);
  t.match(client.text, /Invalid request for model local-model: token \S+ lacks scope/, 'the reason is kept');
  t.match(client.text, /auth\.example\/check\?key=/, 'what was called is kept, its key not');
  t.same(leaked(client.text), [], 'no secret in the error');
});

t.test('a 500 quoting a shortened key: not in /v1/providers/status, nor in the nested log detail', async (t) => {
  custom.next(json(500, { error: { message: 'Internal error validating key vx7Qm2Lp... (vx7Q****d3Hc) for organization org-Zk3Hq8Lm2Nc7Vb4X', type: 'server_error' } }));
  const client = await failure(gateway.client().chat.completions.create({ model: 'local-model', messages: question }));
  t.equal(client.status, 503);
  t.same(leaked(client.text), []);

  const status = await call(gateway.url, '/providers/status');
  const last = status.json.data.find((p: { provider: string }) => p.provider === 'custom').last_error;
  t.match(last.message, /Internal error validating key/, 'the useful part is kept');
  t.notMatch(last.message, /Zk3Hq8Lm2Nc7Vb4X/, 'the organization id is masked');
  t.same(leaked(status.text), [], 'no secret in /v1/providers/status');

  const line = gateway.logs.find((entry) => entry.msg === 'request failed' && JSON.stringify(entry).includes('Internal error validating key'));
  t.ok(line, 'the failure is logged with what the provider said');
  t.same(leaked(JSON.stringify(line)), [], 'no secret in detail[].message');
});

t.test('an error event inside the stream quoting the key ends the stream without it', async (t) => {
  const first = fixture('openai/stream.sse').split('\n\n').slice(0, 2).join('\n\n');
  const error = { error: { message: `Rate check failed for x-api-key: ${CUSTOM_KEY}; key prefix vx7Qm2Lp`, type: 'server_error' } };
  const gate = gatedSse(`${first}\n\n`, `data: ${JSON.stringify(error)}\n\n`);
  custom.next(gate.responder);
  const stream = await gateway.client().chat.completions.create({ model: 'local-model', messages: question, stream: true });
  const { text, failure } = await readUntilFailure(stream, gate);
  t.equal(text, 'The');
  t.ok(failure instanceof APIError, 'an APIError');
  const said = `${(failure as APIError).message} ${JSON.stringify((failure as APIError).error)}`;
  t.match(said, /reported an error in the stream: Rate check failed/);
  t.same(leaked(said), [], 'no secret in the error event');
  const line = gateway.logs.find((entry) => entry.msg === 'stream failed after the first byte' && JSON.stringify(entry).includes('Rate check failed'));
  t.ok(line, 'the failure is logged');
  t.same(leaked(JSON.stringify(line)), [], 'no secret in the log line');
});

t.test("the provider test endpoint shows the provider's refusal without the key it quoted", async (t) => {
  anthropic.next(json(401, { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${ANTHROPIC_KEY.slice(0, 24)}...` } }));
  const result = await call(gateway.url, '/providers/anthropic/test');
  t.equal(result.json.ok, false);
  t.match(result.json.error, /invalid x-api-key/);
  t.same(leaked(result.text), [], 'no secret in the test result');
});

t.test('a key pasted into a prompt is masked in the logged request body', async (t) => {
  await gateway.client().chat.completions.create({ model: 'local-model', messages: [{ role: 'user', content: 'my key is sk-proj-Ab12Cd34Ef56Gh78, is it valid?' }] });
  const line = gateway.logs.find((entry) => entry.msg === 'request' && JSON.stringify(entry).includes('is it valid?'));
  t.ok(line, 'the request is logged with its body');
  t.same(leaked(JSON.stringify(line)), [], 'no key in the logged body');
});

t.test('no log line holds any of the secrets', async (t) => {
  t.ok(gateway.logs.length > 0);
  for (const line of gateway.logs) t.same(leaked(JSON.stringify(line)), [], String(line.msg));
});

// Listening servers keep the event loop alive: end the root test explicitly so t.after runs.
t.end();
