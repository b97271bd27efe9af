// A provider that breaks the connection after it began answering was reached: the client's error
// says it closed the connection mid-answer, not that it could not be reached.
import t from 'tap';
import { APIError } from 'openai';
import { startGateway, PROTOCOL_ONLY, type TestGateway } from '../helpers/gateway.js';
import { PROVIDER_KEYS, startFakeOpenAI } from '../helpers/fakes.js';
import { drop, fixture, readUntilFailure, sse, type FakeProvider } from '../helpers/fake-provider.js';

const question = [{ role: 'user' as const, content: 'Hello' }];
let upstream: FakeProvider;
let gateway: TestGateway;

t.before(async () => {
  upstream = await startFakeOpenAI(PROVIDER_KEYS.custom);
  gateway = await startGateway({ ...PROTOCOL_ONLY, CUSTOM_API_KEY: PROVIDER_KEYS.custom, CUSTOM_BASE_URL: `${upstream.url}/v1`, CUSTOM_MODELS: 'local-model', MODELGATE_ALLOW_UNPRICED_MODELS: 'true' });
});
t.after(async () => {
  await gateway.close();
  await upstream.close();
});

t.test('a connection dropped before any answer still says the provider could not be reached', async (t) => {
  upstream.next(drop());
  const line = gateway.logs.length;
  await t.rejects(gateway.client().chat.completions.create({ model: 'local-model', messages: question }), { status: 503, message: 'Provider unavailable' });
  const logged = JSON.stringify(gateway.logs.slice(line));
  t.match(logged, /Could not reach the custom provider/);
});

t.test('a stream cut after its first content ends with "closed the connection mid-answer"', async (t) => {
  upstream.next(sse(fixture('openai/stream.sse'), { stopAfter: 3, cut: true, delayMs: 50 }));
  const stream = await gateway.client().chat.completions.create({ model: 'local-model', messages: question, stream: true });
  const { text, failure } = await readUntilFailure(stream, { release: () => {} });
  t.ok(text.length > 0, 'content arrived first');
  t.ok(failure instanceof APIError, 'an APIError');
  t.match((failure as APIError).message, /^The custom provider closed the connection mid-answer/);
  t.match((failure as APIError).error, { code: 'upstream_connection_error' });
});

// Listening servers keep the event loop alive: end the root test explicitly so t.after runs.
t.end();
