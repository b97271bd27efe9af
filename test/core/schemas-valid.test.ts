// The schemas compiled at every start are not checked against ajv's meta-schema there (compiling
// the meta-schema cost boot time): they are code, so they are checked here once instead.
import t from 'tap';
import { Ajv } from 'ajv';
import { chatRequestSchema } from '../../core/chat-request.js';
import { overridesJsonSchema } from '../../core/overrides.js';
import { PIPELINE } from '../../core/app.js';

t.test("the chat request's schema is valid by the meta-schema", async (t) => {
  const ajv = new Ajv({ strict: true, discriminator: true });
  t.ok(ajv.validateSchema(chatRequestSchema), ajv.errorsText(ajv.errors));
});

t.test("the per-request overrides' schema is valid by the meta-schema", async (t) => {
  const ajv = new Ajv({ strict: true });
  const specs = PIPELINE.flatMap((module) => module.overrides ?? []);
  t.ok(specs.length > 0, 'plugins declare overrides');
  t.ok(ajv.validateSchema(overridesJsonSchema(specs)), ajv.errorsText(ajv.errors));
});

t.test('a schema the meta-schema refuses is refused by these checks', async (t) => {
  const ajv = new Ajv({ strict: true });
  t.notOk(ajv.validateSchema({ type: 'object', properties: { a: { type: 'string', minLength: 'x' } } }));
});
