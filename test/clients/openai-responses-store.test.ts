// Responses the gateway keeps, through the OpenAI SDK: previous_response_id (the upstream must get
// the earlier turns, as OpenAI is asked statelessly), retrieve and delete, store:false, and the
// scoping of a stored response to the key that made it — for a gpt model passed on natively and a
// claude model translated to Anthropic.
import t from 'tap';
import OpenAI from 'openai';
import type { ResponseFunctionToolCall } from 'openai/resources/responses/responses';
import { call } from '../helpers/gateway.js';
import { checkResponse } from '../helpers/responses-schema.js';
import { useResponsesGateway, gateway, rows, QUESTION, weatherTool, collect, OTHER_KEY, SIBLING_A, SIBLING_B } from '../helpers/responses-clients.js';

useResponsesGateway();

for (const row of rows) {
  t.test(`${row.name}: previous_response_id continues a stored response`, async (t) => {
    const client = gateway.client();
    const first = await client.responses.create({ model: row.model, input: QUESTION, instructions: 'Be concise.' });
    const second = await client.responses.create({ model: row.model, input: 'And of Italy?', previous_response_id: first.id });
    t.equal(second.previous_response_id, first.id);
    t.not(second.id, first.id, 'a new response id');
    const sent = row.upstream().last!;
    if (row.path === '/v1/messages') {
      t.match(sent.json.messages, [
        { role: 'user', content: QUESTION },
        { role: 'assistant', content: first.output_text },
        { role: 'user', content: 'And of Italy?' },
      ]);
      t.equal(sent.json.messages.length, 3);
    } else {
      // OpenAI never saw the gateway's ids: the earlier turn must travel in the input.
      t.ok(sent.body.includes(QUESTION), 'the earlier question reaches OpenAI');
      t.ok(sent.body.includes(JSON.stringify(first.output_text).slice(1, -1)), 'and the earlier answer');
      t.ok(sent.body.includes('And of Italy?'));
      t.not(sent.json.previous_response_id, first.id, 'not a previous_response_id OpenAI cannot know');
    }
  });

  t.test(`${row.name}: a function call continued by previous_response_id and only the function_call_output`, async (t) => {
    const client = gateway.client();
    const first = await client.responses.create({ model: row.model, input: 'What is the weather like?', tools: [weatherTool] });
    const call = first.output.find((item): item is ResponseFunctionToolCall => item.type === 'function_call');
    t.ok(call, 'the first answer is a function call');
    if (!call) return;
    const second = await client.responses.create({
      model: row.model,
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temperature":18}' }],
      tools: [weatherTool],
    });
    t.ok(second.output_text.length > 0, 'a text answer');
    const sent = row.upstream().last!;
    if (row.path === '/v1/messages') {
      const assistant = sent.json.messages.at(-2);
      t.match(
        assistant?.content?.find?.((block: { type: string }) => block.type === 'tool_use'),
        { id: call.call_id, name: 'get_weather' },
        'the stored call reaches Anthropic as the tool_use before the result',
      );
      t.match(sent.json.messages.at(-1), { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.call_id }] });
      t.match(sent.json.messages[0], { role: 'user', content: 'What is the weather like?' }, 'and the first question');
    } else {
      t.ok(sent.body.includes('What is the weather like?'), 'the first question reaches OpenAI');
      t.ok(sent.json.input.some((item: { type?: string; call_id?: string }) => item.type === 'function_call' && item.call_id === call.call_id), 'the stored call');
      t.match(sent.json.input.at(-1), { type: 'function_call_output', call_id: call.call_id });
    }
  });

  t.test(`${row.name}: instructions are not carried over by previous_response_id`, async (t) => {
    const client = gateway.client();
    const first = await client.responses.create({ model: row.model, input: QUESTION, instructions: 'Answer in French.' });
    await client.responses.create({ model: row.model, input: 'And of Italy?', previous_response_id: first.id });
    // OpenAI's reference for `instructions`: "the instructions from a previous response will not be carried over".
    t.notOk(row.upstream().last!.body.includes('Answer in French.'), 'the earlier instructions do not reach the upstream');
  });

  t.test(`${row.name}: a streamed response is stored and can be continued`, async (t) => {
    const client = gateway.client();
    const events = await collect(await client.responses.create({ model: row.model, input: QUESTION, stream: true }));
    const completed = events.at(-1);
    if (completed?.type !== 'response.completed') return t.fail(`the stream ended on ${completed?.type}`);
    const retrieved = await client.responses.retrieve(completed.response.id);
    t.equal(retrieved.status, 'completed');
    t.same(retrieved.output, completed.response.output, 'the stored output is the streamed one');
    await client.responses.create({ model: row.model, input: 'And of Italy?', previous_response_id: completed.response.id });
    t.ok(row.upstream().last!.body.includes(QUESTION), 'the streamed turn reaches the upstream');
  });

  t.test(`${row.name}: retrieve and delete a stored response; another key sees nothing`, async (t) => {
    const client = gateway.client();
    const other = gateway.client({ apiKey: OTHER_KEY });
    const created = await client.responses.create({ model: row.model, input: QUESTION });
    const calls = row.upstream().requests.length;
    const retrieved = await client.responses.retrieve(created.id);
    t.equal(checkResponse(retrieved), null);
    t.equal(retrieved.id, created.id);
    t.equal(retrieved.output_text, created.output_text);
    t.equal(retrieved.status, 'completed');
    t.equal(row.upstream().requests.length, calls, 'read from the gateway, not the upstream');

    const foreign = await other.responses.retrieve(created.id).catch((error: unknown) => error);
    t.ok(foreign instanceof OpenAI.NotFoundError, `another key gets 404 (got ${String(foreign)})`);
    const foreignDelete = await other.responses.delete(created.id).catch((error: unknown) => error);
    t.ok(foreignDelete instanceof OpenAI.NotFoundError, 'and cannot delete it');
    const foreignContinue = await other.responses.create({ model: row.model, input: 'more', previous_response_id: created.id }).catch((error: unknown) => error);
    t.ok(foreignContinue instanceof OpenAI.NotFoundError, `nor continue it (got ${String(foreignContinue)})`);
    t.equal((await client.responses.retrieve(created.id)).id, created.id, 'still there for its owner');

    const deleted = await call(gateway.url, `/responses/${created.id}`, { method: 'DELETE' });
    t.equal(deleted.status, 200);
    // OpenAI's documented answer (API reference, "Delete a model response"): object "response", not "response.deleted".
    t.same(deleted.json, { id: created.id, object: 'response', deleted: true });
    const gone = await client.responses.retrieve(created.id).catch((error: unknown) => error);
    t.ok(gone instanceof OpenAI.NotFoundError, 'deleted: 404');
    const again = await client.responses.delete(created.id).catch((error: unknown) => error);
    t.ok(again instanceof OpenAI.NotFoundError, 'a second delete: 404');
  });

  t.test(`${row.name}: store:false answers but keeps nothing`, async (t) => {
    const client = gateway.client();
    const response = await client.responses.create({ model: row.model, input: QUESTION, store: false });
    t.equal(response.output_text, row.text);
    t.equal((response as { store?: boolean }).store, false);
    const error = await client.responses.retrieve(response.id).catch((caught: unknown) => caught);
    t.ok(error instanceof OpenAI.NotFoundError, `retrieve: 404 (got ${String(error)})`);
  });

  t.test(`${row.name}: another key of the same tenant cannot read a key's stored response`, async (t) => {
    const created = await gateway.client({ apiKey: SIBLING_A }).responses.create({ model: row.model, input: QUESTION });
    t.equal((await gateway.client({ apiKey: SIBLING_A }).responses.retrieve(created.id)).id, created.id);
    const error = await gateway.client({ apiKey: SIBLING_B }).responses.retrieve(created.id).catch((caught: unknown) => caught);
    t.ok(error instanceof OpenAI.NotFoundError, `404 (got ${String(error)})`);
  });
}
