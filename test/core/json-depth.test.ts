// Deeply nested JSON, through the real gateway: refused with 400 naming the field wherever it
// hides, before any recursive walk (cache key, token estimate, adapters) can overflow the stack;
// a body just within the limit goes through. The cache is on, so the cache key walks every body.
import t, { type Test } from 'tap';
import { startGateway, call, type TestGateway } from '../helpers/gateway.js';
import { startFakeOpenAI, PROVIDER_KEYS } from '../helpers/fakes.js';
import type { FakeProvider } from '../helpers/fake-provider.js';

const LIMIT = 64; // MODELGATE_MAX_JSON_DEPTH's default
const ABUSIVE = 10_000;

/** A fake OpenAI and a gateway in front of it, closed when the test `t` ends. */
async function gatewayFor(t: Test, env: Record<string, string> = {}): Promise<TestGateway> {
  const upstream: FakeProvider = await startFakeOpenAI();
  const gateway = await startGateway({ OPENAI_API_KEY: PROVIDER_KEYS.openai, OPENAI_BASE_URL: `${upstream.url}/v1`, MODELGATE_RETRIES: '0', ...env });
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  return gateway;
}

const base = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], max_completion_tokens: 16 };

/** `levels` arrays, one inside the other, as JSON text (built as text: JSON.stringify would overflow). */
const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
/** The body with `slot` replaced by the raw JSON text. */
const bodyWith = (shape: Record<string, unknown>, raw: string) => JSON.stringify({ ...base, ...shape }).replace('"SLOT"', raw);

// Each field with the levels above its arrays: the body is level 1, so `metadata`'s first array is level 2.
const FIELDS = [
  { param: 'metadata', shape: { metadata: 'SLOT' }, above: 1 },
  { param: 'x_unknown_field', shape: { x_unknown_field: 'SLOT' }, above: 1 },
  {
    param: 'tools[0].function.parameters',
    shape: { tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { a: 'SLOT' } } } }] },
    above: 6, // body, tools, tools[0], function, parameters, properties
  },
  {
    param: 'response_format.json_schema.schema',
    shape: { response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'object', properties: { a: 'SLOT' } } } } },
    above: 5,
  },
];

t.test('with the default limit', async (t) => {
  const gateway = await gatewayFor(t);

  for (const { param, shape, above } of FIELDS) {
    t.test(`${ABUSIVE} levels of arrays in ${param} are a 400 naming it`, async (t) => {
      const response = await call(gateway.url, '/chat/completions', { body: bodyWith(shape, nested(ABUSIVE)) });
      t.equal(response.status, 400, response.text.slice(0, 300));
      t.equal(response.json?.error.type, 'invalid_request_error');
      t.equal(response.json?.error.code, 'json_too_deep');
      t.equal(response.json?.error.param, param);
      t.match(response.json?.error.message, /64 levels.*MODELGATE_MAX_JSON_DEPTH/);
    });

    t.test(`${param} nested to exactly the limit is served; one level more is refused`, async (t) => {
      const fits = await call(gateway.url, '/chat/completions', { body: bodyWith(shape, nested(LIMIT - above)) });
      t.equal(fits.status, 200, fits.text.slice(0, 300));
      const over = await call(gateway.url, '/chat/completions', { body: bodyWith(shape, nested(LIMIT - above + 1)) });
      t.equal(over.status, 400);
      t.equal(over.json?.error.param, param);
    });
  }

  t.test("a tool call's arguments nested too deeply are a 400 naming them", async (t) => {
    const body = JSON.stringify({
      ...base,
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: `{"a":${nested(ABUSIVE)}}` } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'done' },
      ],
    });
    const response = await call(gateway.url, '/chat/completions', { body });
    t.equal(response.status, 400);
    t.equal(response.json?.error.code, 'json_too_deep');
    t.equal(response.json?.error.param, 'messages[1].tool_calls[0].function.arguments');
  });
});

t.test('the limit is a setting', async (t) => {
  const strict = await gatewayFor(t, { MODELGATE_MAX_JSON_DEPTH: '8' });
  const response = await call(strict.url, '/chat/completions', { body: bodyWith({ metadata: 'SLOT' }, nested(8)) });
  t.equal(response.status, 400);
  t.match(response.json?.error.message, /8 levels/);
  t.equal((await call(strict.url, '/chat/completions', { body: bodyWith({ metadata: 'SLOT' }, nested(7)) })).status, 200);
});
