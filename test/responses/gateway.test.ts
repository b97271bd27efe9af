// POST /v1/responses through the real gateway: OpenAI models to OpenAI's own Responses endpoint
// (what it is sent, what comes back), other providers' models translated; stored responses per key
// (continued, read, deleted, refused to other keys, not kept with store:false, swept when expired);
// the cache, cost and metrics apply as for chat.
import t from 'tap';
import { APIError } from 'openai';
import { startGateway, GATEWAY_KEY, type TestGateway } from '../helpers/gateway.js';
import { anthropicResponder, PROVIDER_KEYS } from '../helpers/fakes.js';
import { FakeProvider, fixture, fixtureJson, json, sse, type Responder } from '../helpers/fake-provider.js';
import { keyStore } from '../helpers/keys.js';
import { scrape } from '../helpers/metrics.js';

const OTHER_KEY = 'uc_other_tenant_key_0001';

/** OpenAI's Responses endpoint replaying the recorded answers. */
const openAIResponses: Responder = (request, res) => {
  if (request.headers.authorization !== `Bearer ${PROVIDER_KEYS.openai}`) return json(401, fixtureJson('openai/error-401.json'))(request, res);
  if (request.method !== 'POST' || request.url !== '/v1/responses') return json(404, fixtureJson('openai/error-404.json'))(request, res);
  if (request.json?.stream) return sse(fixture('openai-responses/stream.sse'))(request, res);
  return json(200, fixtureJson('openai-responses/response.json'))(request, res);
};

let openai: FakeProvider;
let anthropic: FakeProvider;
let gateway: TestGateway;

t.before(async () => {
  openai = await FakeProvider.start(openAIResponses);
  anthropic = await FakeProvider.start(anthropicResponder());
  gateway = await startGateway(
    {
      MODELGATE_RETRIES: '0',
      MODELGATE_CIRCUIT_BREAKER_ENABLED: 'false',
      OPENAI_API_KEY: PROVIDER_KEYS.openai,
      OPENAI_BASE_URL: `${openai.url}/v1`,
      ANTHROPIC_API_KEY: PROVIDER_KEYS.anthropic,
      ANTHROPIC_BASE_URL: anthropic.url,
    },
    { keyStores: [keyStore({ [OTHER_KEY]: {} })] },
  );
});
t.after(async () => {
  await gateway.close();
  await openai.close();
  await anthropic.close();
});
t.beforeEach(() => {
  openai.reset();
  anthropic.reset();
});

const RECORDED_TEXT = (fixtureJson('openai-responses/response.json') as { output: Array<{ type: string; content?: Array<{ text: string }> }> }).output
  .filter((item) => item.type === 'message')
  .map((item) => item.content!.map((part) => part.text).join(''))
  .join('');

t.test("an OpenAI model goes to OpenAI's own /v1/responses, stateless: store false, the history written out, no gateway ids", async (t) => {
  const client = gateway.client();
  const first = await client.responses.create({ model: 'gpt-4o-mini', input: 'Summarize the file.', instructions: 'Be brief', metadata: { team: 'a' }, reasoning: { effort: 'low' } } as never);
  const sent = openai.last!;
  t.equal(sent.url, '/v1/responses');
  t.equal(sent.headers.authorization, `Bearer ${PROVIDER_KEYS.openai}`);
  t.equal(sent.json.store, false, 'OpenAI keeps nothing: the gateway holds the state');
  t.equal(sent.json.model, 'gpt-4o-mini');
  t.same(sent.json.input, [{ role: 'user', content: 'Summarize the file.' }]);
  t.equal(sent.json.instructions, 'Be brief');
  t.same(sent.json.reasoning, { effort: 'low' }, 'fields chat has not are passed on');
  t.notOk('stream' in sent.json);
  t.equal(first.output_text, RECORDED_TEXT);
  t.match(first.id, /^resp_[0-9a-f]{32}$/, "the gateway's own id, not OpenAI's");
  t.same(first.metadata, { team: 'a' });
  t.equal(first.model, 'gpt-4o-mini');

  // Only what the gateway checked reaches OpenAI: no file id beside the image URL, detail as OpenAI names it.
  await client.responses.create({
    model: 'gpt-4o-mini',
    input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://x/cat.png', file_id: 'file-operator', detail: 'original' }] }],
  } as never);
  t.same(openai.last!.json.input, [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://x/cat.png', detail: 'auto' }] }]);

  await client.responses.create({ model: 'gpt-4o-mini', input: 'Shorter.', previous_response_id: first.id });
  const again = openai.last!.json;
  t.notOk('previous_response_id' in again, 'OpenAI never sees the gateway id');
  t.same(again.input[0], { role: 'user', content: 'Summarize the file.' });
  t.match(again.input[1], { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: RECORDED_TEXT }] });
  t.notOk('id' in again.input[1], 'no item ids OpenAI did not issue');
  t.notOk('status' in again.input[1]);
  t.same(again.input[2], { role: 'user', content: 'Shorter.' });
});

t.test("OpenAI's recorded stream comes through as the Responses events, renumbered, with usage", async (t) => {
  const stream = await gateway.client().responses.create({ model: 'gpt-4o-mini', input: 'Summarize the file.', stream: true });
  const events: Array<{ type: string; sequence_number: number; [key: string]: any }> = [];
  for await (const event of stream) events.push(event as never);
  t.equal(openai.last!.json.stream, true);
  t.same(events.map((e) => e.sequence_number), [...events.keys()]);
  t.equal(events[0]!.type, 'response.created');
  t.equal(events.at(-1)!.type, 'response.completed');
  t.equal(events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join(''), 'Dummy PDF file');
  t.ok(events.at(-1)!.response.usage.input_tokens > 0);
});

t.test('a stored response is read, continued and deleted only with the key that made it', async (t) => {
  const mine = gateway.client();
  const theirs = gateway.client({ apiKey: OTHER_KEY });
  const made = await mine.responses.create({ model: 'claude-sonnet-4-5', input: 'What is the capital of France?' });
  t.equal(made.output_text, 'The capital of France is Paris.');
  // The answer came after its row was written: another replica reading the database finds it now.
  const row = await gateway.app.deps.store().db.selectFrom('responses').select('id').where('id', '=', made.id).executeTakeFirst();
  t.equal(row?.id, made.id);
  t.equal((await mine.responses.retrieve(made.id)).output_text, made.output_text);

  for (const call of [() => theirs.responses.retrieve(made.id), () => theirs.responses.delete(made.id)]) {
    const error = await call().catch((e: unknown) => e);
    t.ok(error instanceof APIError && error.status === 404, 'another key: 404');
    t.match((error as APIError).error, { code: 'response_not_found' });
  }
  const continued = await theirs.responses.create({ model: 'claude-sonnet-4-5', input: 'And Germany?', previous_response_id: made.id }).catch((e: unknown) => e);
  t.ok(continued instanceof APIError && continued.status === 404, 'another key cannot continue it');
  t.equal((continued as APIError).param, 'previous_response_id');

  const next = await mine.responses.create({ model: 'claude-sonnet-4-5', input: 'And Germany?', previous_response_id: made.id });
  t.equal(next.previous_response_id, made.id);
  t.same(anthropic.last!.json.messages, [
    { role: 'user', content: 'What is the capital of France?' },
    { role: 'assistant', content: 'The capital of France is Paris.' },
    { role: 'user', content: 'And Germany?' },
  ]);
  t.same(await mine.responses.delete(made.id), { id: made.id, object: 'response', deleted: true });
  const gone = await mine.responses.retrieve(made.id).catch((e: unknown) => e);
  t.ok(gone instanceof APIError && gone.status === 404);
  // The continuation stands on its own: it holds the whole conversation.
  await mine.responses.create({ model: 'claude-sonnet-4-5', input: 'And Italy?', previous_response_id: next.id });
  t.equal(anthropic.last!.json.messages.length, 5);
});

t.test('an item_reference names an output item of a stored response: resolved for its key only', async (t) => {
  const mine = gateway.client();
  const made = await mine.responses.create({ model: 'claude-sonnet-4-5', input: 'What is the capital of France?' });
  const itemId = made.output[0]!.id!;
  const input = [{ role: 'user', content: 'What is the capital of France?' }, { type: 'item_reference', id: itemId }, { role: 'user', content: 'Sure?' }];
  await mine.responses.create({ model: 'claude-sonnet-4-5', input } as never);
  t.same(anthropic.last!.json.messages[1], { role: 'assistant', content: 'The capital of France is Paris.' });
  const theirs = await gateway.client({ apiKey: OTHER_KEY }).responses.create({ model: 'claude-sonnet-4-5', input } as never).catch((e: unknown) => e);
  t.ok(theirs instanceof APIError && theirs.status === 404, "another key's item: 404");
  t.equal((theirs as APIError).param, 'input[1].id');
  const unknown = await mine.responses.create({ model: 'claude-sonnet-4-5', input: [{ type: 'item_reference', id: 'rs_made_up' }] } as never).catch((e: unknown) => e);
  t.ok(unknown instanceof APIError && unknown.status === 404);
});

t.test('more than 1000 item references are refused before any lookup', async (t) => {
  const input = Array.from({ length: 1001 }, () => ({ type: 'item_reference', id: `msg_${'0'.repeat(32)}` }));
  const error = await gateway.client().responses.create({ model: 'claude-sonnet-4-5', input } as never).catch((e: unknown) => e);
  t.ok(error instanceof APIError && error.status === 400);
  t.equal((error as APIError).param, 'input');
});

t.test('store: false keeps nothing; unknown and malformed ids are 404', async (t) => {
  const client = gateway.client();
  const made = await client.responses.create({ model: 'claude-sonnet-4-5', input: 'x', store: false });
  t.equal((made as unknown as { store: boolean }).store, false);
  await gateway.app.deps.responses.settled();
  for (const id of [made.id, `resp_${'0'.repeat(32)}`, 'resp_x%2F..']) {
    const error = await client.responses.retrieve(id).catch((e: unknown) => e);
    t.ok(error instanceof APIError && error.status === 404, `${id}: 404`);
  }
  const rows = await gateway.app.deps.store().db.selectFrom('responses').select('id').where('id', '=', made.id).execute();
  t.same(rows, []);
});

t.test('stored responses past MODELGATE_RESPONSES_RETENTION are not served and are swept', async (t) => {
  const client = gateway.client();
  const made = await client.responses.create({ model: 'claude-sonnet-4-5', input: 'keep me' });
  await gateway.app.deps.responses.settled();
  const later = Date.now() + 31 * 86_400_000;
  t.ok((await gateway.app.deps.responses.sweep(later)) >= 1);
  const error = await client.responses.retrieve(made.id).catch((e: unknown) => e);
  t.ok(error instanceof APIError && error.status === 404);
});

t.test('a repeated request is a cache hit, answered as a new Response at no cost; metrics count the route', async (t) => {
  const client = gateway.client();
  const body = { model: 'claude-sonnet-4-5', input: 'Cache me' };
  const first = await client.responses.create(body).withResponse();
  const second = await client.responses.create(body).withResponse();
  t.equal(first.response.headers.get('x-modelgate-cache'), 'MISS');
  t.ok(Number(first.response.headers.get('x-modelgate-cost')) > 0);
  t.equal(second.response.headers.get('x-modelgate-cache'), 'HIT');
  t.equal(second.response.headers.get('x-modelgate-cost'), '0');
  t.not(second.data.id, first.data.id);
  t.equal(second.data.output_text, first.data.output_text);
  const stream = await client.responses.create({ ...body, stream: true });
  let text = '';
  for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
  t.equal(text, first.data.output_text, 'a cached answer streams as events too');
  const metrics = await scrape(gateway.url);
  const served = metrics.series('modelgate_requests_total').filter((s) => s.labels.route === 'POST /v1/responses');
  t.ok(served.reduce((sum, s) => sum + s.value, 0) >= 3);
});

t.test('responses appear in the usage report with their model, tokens and cost', async (t) => {
  const day = new Date().toISOString().slice(0, 10);
  const response = await fetch(`${gateway.url}/usage?from=${day}&to=${day}`, { headers: { authorization: `Bearer ${GATEWAY_KEY}` } });
  const report = (await response.json()) as { range: { by_model: Array<{ model: string; requests: number; prompt_tokens: number; cost_usd: number }> } };
  for (const model of ['gpt-4o-mini', 'claude-sonnet-4-5']) {
    const row = report.range.by_model.find((entry) => entry.model === model);
    t.ok(row && row.requests >= 2 && row.prompt_tokens > 0 && row.cost_usd > 0, `${model}: ${JSON.stringify(row)}`);
  }
});

t.test('refusals are OpenAI-shaped 400s naming the field; the key is needed', async (t) => {
  const client = gateway.client();
  const error = await client.responses.create({ model: 'gpt-4o-mini', input: 'x', tools: [{ type: 'web_search' }] as never }).catch((e: unknown) => e);
  t.ok(error instanceof APIError && error.status === 400);
  t.match((error as APIError).message, /web_search/);
  t.equal((error as APIError).param, 'tools[0].type');
  const anonymous = await fetch(`${gateway.url}/responses`, { method: 'POST', body: '{}' });
  t.equal(anonymous.status, 401);
  t.equal(openai.requests.length, 0);
});

t.end();
