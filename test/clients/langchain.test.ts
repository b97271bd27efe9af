// LangChain's OpenAI integration against the gateway, as its users configure it: ChatOpenAI with the
// gateway's base URL, a uc_ key and useResponsesApi, and OpenAIEmbeddings. A gpt model goes on to
// OpenAI's /v1/responses (a fake replaying recorded answers), a claude model is translated to
// Anthropic's Messages API.
import t from 'tap';
import { ChatOpenAI, OpenAIEmbeddings } from '@langchain/openai';
import { HumanMessage, ToolMessage } from '@langchain/core/messages';
import { startGateway, GATEWAY_KEY, PROTOCOL_ONLY, type TestGateway } from '../helpers/gateway.js';
import { FAKE_DIMENSIONS, fakeVector, startFakeAnthropic, startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import { fixtureJson, type FakeProvider } from '../helpers/fake-provider.js';

let openaiUpstream: FakeProvider;
let anthropicUpstream: FakeProvider;
let gateway: TestGateway;

t.before(async () => {
  openaiUpstream = await startFakeOpenAI();
  anthropicUpstream = await startFakeAnthropic();
  gateway = await startGateway({
    ...PROTOCOL_ONLY,
    OPENAI_API_KEY: PROVIDER_KEYS.openai,
    OPENAI_BASE_URL: `${openaiUpstream.url}/v1`,
    ANTHROPIC_API_KEY: PROVIDER_KEYS.anthropic,
    ANTHROPIC_BASE_URL: anthropicUpstream.url,
  });
});
t.teardown(async () => {
  await gateway?.close();
  await openaiUpstream?.close();
  await anthropicUpstream?.close();
});
t.beforeEach(() => {
  openaiUpstream.reset();
  anthropicUpstream.reset();
});

function chat(model: string): ChatOpenAI {
  return new ChatOpenAI({ model, apiKey: GATEWAY_KEY, configuration: { baseURL: gateway.url }, useResponsesApi: true, maxRetries: 0 });
}

const QUESTION = 'What is the capital of France?';
const recordedText: string = fixtureJson('openai-responses/response.json').output[0].content[0].text;
const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Get the current weather at a specific location',
    parameters: { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['location', 'unit'] },
  },
};

const rows = [
  { name: 'OpenAI', model: 'gpt-4o-mini', upstream: () => openaiUpstream, path: '/v1/responses', text: recordedText, streamed: 'Dummy PDF file', usage: { input_tokens: 14, output_tokens: 50, total_tokens: 64 }, args: { location: 'San Francisco, CA', unit: 'fahrenheit' } },
  { name: 'Anthropic', model: 'claude-sonnet-4-5', upstream: () => anthropicUpstream, path: '/v1/messages', text: 'The capital of France is Paris.', streamed: 'The capital of France is Paris.', usage: { input_tokens: 2067, output_tokens: 10, total_tokens: 2077 }, args: { location: 'Paris' } },
];

for (const row of rows) {
  t.test(`${row.name}: invoke returns the answer and its usage`, async (t) => {
    const message = await chat(row.model).invoke([
      ['system', 'Be concise.'],
      ['human', QUESTION],
    ]);
    t.equal(message.text, row.text);
    t.match(message.usage_metadata, row.usage);
    t.match(message.response_metadata, { model_provider: 'openai' });
    t.equal(row.upstream().last?.url, row.path);
  });

  t.test(`${row.name}: stream yields the text piece by piece`, async (t) => {
    const pieces: string[] = [];
    for await (const chunk of await chat(row.model).stream(QUESTION)) pieces.push(chunk.text);
    t.equal(pieces.join(''), row.streamed);
    t.ok(pieces.filter(Boolean).length > 1, 'in more than one piece');
    t.equal(row.upstream().last?.json.stream, true);
  });

  t.test(`${row.name}: bindTools gets a tool call back`, async (t) => {
    const message = await chat(row.model).bindTools([weatherTool]).invoke('What is the weather like?');
    t.match(message.tool_calls, [{ name: 'get_weather', args: row.args, type: 'tool_call' }]);
    t.ok(message.tool_calls?.[0]?.id, 'with an id to answer');
  });

  t.test(`${row.name}: the tool's result sent back as a ToolMessage gets the answer`, async (t) => {
    const model = chat(row.model).bindTools([weatherTool]);
    const question = new HumanMessage('What is the weather like?');
    const called = await model.invoke([question]);
    const call = called.tool_calls?.[0];
    t.ok(call?.id, 'a tool call');
    if (!call?.id) return;
    const answer = await model.invoke([question, called, new ToolMessage({ tool_call_id: call.id, content: '{"temperature":18}' })]);
    t.equal(answer.tool_calls?.length ?? 0, 0, 'no second call');
    t.ok(answer.text.length > 0, 'a text answer');
    const sent = row.upstream().last!;
    if (row.path === '/v1/messages') {
      t.match(sent.json.messages.at(-1), { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id }] });
    } else {
      t.match(sent.json.input.at(-1), { type: 'function_call_output', call_id: call.id, output: '{"temperature":18}' });
    }
  });
}

t.test('OpenAIEmbeddings: embedQuery and embedDocuments', async (t) => {
  const embeddings = new OpenAIEmbeddings({ model: 'text-embedding-3-small', apiKey: GATEWAY_KEY, configuration: { baseURL: gateway.url }, maxRetries: 0 });
  // LangChain asks for base64 (float32): the vectors arrive rounded to float32.
  t.same(await embeddings.embedQuery('sunny day at the beach'), fakeVector('sunny day at the beach', FAKE_DIMENSIONS).map(Math.fround));
  t.equal(openaiUpstream.last!.url, '/v1/embeddings');
  const documents = ['sunny day at the beach', 'rainy day in the city', 'snow in the mountains'];
  t.same(
    await embeddings.embedDocuments(documents),
    documents.map((text) => fakeVector(text, FAKE_DIMENSIONS).map(Math.fround)),
  );
  const shorter = new OpenAIEmbeddings({ model: 'text-embedding-3-small', dimensions: 64, apiKey: GATEWAY_KEY, configuration: { baseURL: gateway.url }, maxRetries: 0 });
  t.same(await shorter.embedQuery('hello'), fakeVector('hello', 64).map(Math.fround));
});
