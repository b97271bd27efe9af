// The setup the Responses client tests share: one gateway in front of fake OpenAI (serving its own
// /v1/responses from recorded answers), Anthropic, Gemini, Cohere and Mistral; the extra keys; the two
// rows every test runs (a gpt model passed on natively, a claude model translated); and the stream
// checks every client relies on.
import t, { type Test } from 'tap';
import type { ResponseStreamEvent, FunctionTool } from 'openai/resources/responses/responses';
import { startGateway, PROTOCOL_ONLY, type TestGateway } from './gateway.js';
import { startFakeAnthropic, startFakeCohere, startFakeGemini, startFakeMistral, startFakeOpenAI, PROVIDER_KEYS } from './fakes.js';
import { fixtureJson, type FakeProvider } from './fake-provider.js';
import { keyStore } from './keys.js';
import { checkStreamEvents } from './responses-schema.js';

export const OTHER_KEY = 'uc_other_tenant_0123456789abcdef';
// Two keys of one tenant: stored responses belong to the key that made them, not to its tenant.
export const SIBLING_A = 'uc_sibling_a_0123456789abcdef';
export const SIBLING_B = 'uc_sibling_b_0123456789abcdef';

export let openaiUpstream: FakeProvider;
export let anthropicUpstream: FakeProvider;
export let others: { google: FakeProvider; cohere: FakeProvider; mistral: FakeProvider };
export let gateway: TestGateway;

/** One gateway for the calling test file, in front of every fake; each test starts with empty request logs. */
export function useResponsesGateway(): void {
t.before(async () => {
  openaiUpstream = await startFakeOpenAI();
  anthropicUpstream = await startFakeAnthropic();
  others = { google: await startFakeGemini(), cohere: await startFakeCohere(), mistral: await startFakeMistral() };
  gateway = await startGateway(
    {
      ...PROTOCOL_ONLY,
      OPENAI_API_KEY: PROVIDER_KEYS.openai,
      OPENAI_BASE_URL: `${openaiUpstream.url}/v1`,
      ANTHROPIC_API_KEY: PROVIDER_KEYS.anthropic,
      ANTHROPIC_BASE_URL: anthropicUpstream.url,
      GOOGLE_API_KEY: PROVIDER_KEYS.google,
      GOOGLE_BASE_URL: others.google.url,
      COHERE_API_KEY: PROVIDER_KEYS.cohere,
      COHERE_BASE_URL: others.cohere.url,
      MISTRAL_API_KEY: PROVIDER_KEYS.mistral,
      MISTRAL_BASE_URL: others.mistral.url,
    },
    { keyStores: [keyStore({ [OTHER_KEY]: {}, [SIBLING_A]: { tenant: 'acme' }, [SIBLING_B]: { tenant: 'acme' } })] },
  );
});
t.teardown(async () => {
  await gateway?.close();
  await openaiUpstream?.close();
  await anthropicUpstream?.close();
  for (const upstream of Object.values(others ?? {})) await upstream.close();
});
t.beforeEach(() => {
  openaiUpstream.reset();
  anthropicUpstream.reset();
});
}

export interface Row {
  name: string;
  model: string;
  upstream: () => FakeProvider;
  /** The path the upstream is called on. */
  path: string;
  text: string;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number; cached_tokens: number };
  toolArguments: Record<string, unknown>;
}

const recorded = fixtureJson('openai-responses/response.json');
export const rows: Row[] = [
  {
    name: 'OpenAI (native /v1/responses)',
    model: 'gpt-4o-mini',
    upstream: () => openaiUpstream,
    path: '/v1/responses',
    text: recorded.output[0].content[0].text,
    usage: { input_tokens: 14, output_tokens: 50, total_tokens: 64, cached_tokens: 0 },
    toolArguments: { location: 'San Francisco, CA', unit: 'fahrenheit' },
  },
  {
    name: 'Anthropic (translated to Messages)',
    model: 'claude-sonnet-4-5',
    upstream: () => anthropicUpstream,
    path: '/v1/messages',
    text: 'The capital of France is Paris.',
    // 19 fresh + 2048 cache-read input tokens in the fixture
    usage: { input_tokens: 2067, output_tokens: 10, total_tokens: 2077, cached_tokens: 2048 },
    toolArguments: { location: 'Paris' },
  },
];

export const QUESTION = 'What is the capital of France?';
export const weatherTool: FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Get the current weather at a specific location',
  parameters: { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['location', 'unit'], additionalProperties: false },
  strict: true,
};

/** The text stream's event order, with the run of deltas as one entry. */
export const TEXT_ORDER = [
  'response.created',
  'response.in_progress',
  'response.output_item.added',
  'response.content_part.added',
  'response.output_text.delta',
  'response.output_text.done',
  'response.content_part.done',
  'response.output_item.done',
  'response.completed',
];

export function collapsed(types: string[]): string[] {
  return types.filter((type, index) => type !== types[index - 1]);
}

export async function collect(stream: AsyncIterable<ResponseStreamEvent>): Promise<ResponseStreamEvent[]> {
  const events: ResponseStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The stream's invariants every client relies on; the event schema problems are returned for t.same(…, []). */
export function checkStream(t: Test, events: ResponseStreamEvent[]): void {
  t.same(
    events.map((event) => event.sequence_number),
    events.map((_, index) => index),
    'sequence_number runs 0..n',
  );
  const { problems, applied } = checkStreamEvents(events);
  t.same(problems, [], 'every event is valid against its schema $def and ResponseStreamEvent');
  if (applied.size > 0) t.comment(`known spec-vs-wire normalisations applied: ${[...applied].join(', ')}`);
  const added = events.filter((event) => event.type === 'response.output_item.added').map((event) => event.item.id);
  const done = events.filter((event) => event.type === 'response.output_item.done').map((event) => event.item.id);
  t.same(done, added, 'every output item added is done, in order');
  const ids = new Set(events.flatMap((event) => ('response' in event ? [event.response.id] : [])));
  t.equal(ids.size, 1, 'created, in_progress and completed name the same response');
}
