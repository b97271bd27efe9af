import t from 'tap';
import { validateChatRequest } from '../../core/chat-request.js';
import { fixtureJson } from '../helpers/fake-provider.js';

const ok = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

function refusal(body: unknown): { message: string; param: string | null; status: number } {
  try {
    validateChatRequest(body);
  } catch (error) {
    const e = error as { message: string; param: string | null; status: number };
    return { message: e.message, param: e.param, status: e.status };
  }
  throw new Error('expected a refusal');
}

t.test('the canonical requests of the fixtures are valid', async (t) => {
  t.doesNotThrow(() => validateChatRequest(fixtureJson('openai/request.json')));
  t.doesNotThrow(() => validateChatRequest(fixtureJson('openai/request-stream-tools.json')));
  t.doesNotThrow(() =>
    validateChatRequest({
      model: 'auto',
      messages: [
        { role: 'developer', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '42' },
      ],
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' } } },
      stop: ['\n'],
      seed: 1,
      user: 'u1',
      some_future_field: true,
    }),
  );
});

t.test('each bad field is named in param and message', async (t) => {
  const cases: Array<[unknown, string | null, RegExp]> = [
    [[], null, /must be a JSON object/],
    [{ messages: ok.messages }, 'model', /'model': is required/],
    [{ ...ok, model: '' }, 'model', /'model'/],
    [{ ...ok, messages: [] }, 'messages', /'messages': must NOT have fewer than 1 items/],
    [{ ...ok, messages: [{ content: 'x' }] }, 'messages[0].role', /is required/],
    [{ ...ok, messages: [{ role: 'wizard', content: 'x' }] }, 'messages[0].role', /unsupported value/],
    [{ ...ok, messages: [{ role: 'user' }] }, 'messages[0].content', /is required/],
    [{ ...ok, messages: [{ role: 'user', content: 5 }] }, 'messages[0].content', /must be string or array/],
    [{ ...ok, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }] }, 'messages[0].content[0].image_url.url', /is required/],
    [{ ...ok, messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].tool_call_id', /is required/],
    [{ ...ok, temperature: 3 }, 'temperature', /must be <= 2/],
    [{ ...ok, max_tokens: 0 }, 'max_tokens', /must be >= 1/],
    [{ ...ok, n: 2 }, 'n', /must be <= 1/],
    [{ ...ok, stream: 'yes' }, 'stream', /must be boolean/],
    [{ ...ok, tools: [{ type: 'function', function: { name: 'bad name!' } }] }, 'tools[0].function.name', /must match pattern/],
    [{ ...ok, tool_choice: 'sometimes' }, 'tool_choice', /must be one of "none", "auto", "required"/],
    [{ ...ok, response_format: { type: 'yaml' } }, 'response_format.type', /must be one of "text", "json_object", "json_schema"/],
    [{ ...ok, messages: [{ role: 'user', content: 'x', tool_calls: 'x' }] }, 'messages[0].tool_calls', /must be array/],
    [{ ...ok, messages: [{ role: 'user', content: 'x', tool_calls: [{}] }] }, 'messages[0].tool_calls[0].id', /is required/],
    [{ ...ok, messages: [{ role: 'tool', content: 'x', tool_call_id: 'c', name: ['x'] }] }, 'messages[0].name', /must be string/],
    [{ ...ok, response_format: { type: 'json_schema' } }, 'response_format.json_schema', /'response_format.json_schema': is required/],
    // Billed at other prices than the catalog's: a bill on them would be wrong.
    [{ ...ok, service_tier: 'priority' }, 'service_tier', /must be one of "auto", "default"/],
    [{ ...ok, service_tier: 'flex' }, 'service_tier', /must be one of "auto", "default"/],
  ];
  for (const [body, param, message] of cases) {
    const refused = refusal(body);
    t.equal(refused.status, 400, `${JSON.stringify(body).slice(0, 60)}: 400`);
    t.equal(refused.param, param, `${JSON.stringify(body).slice(0, 60)}: param`);
    t.match(refused.message, message, `${JSON.stringify(body).slice(0, 60)}: message`);
  }
});

t.test('a body of hundreds of thousands of bad elements is refused as the first one, not with a crash', async (t) => {
  const refused = refusal({ model: 'x', messages: Array.from({ length: 300_000 }, () => ({})) });
  t.equal(refused.status, 400);
  t.equal(refused.param, 'messages[0].role');
});
