// A validator compiled on first use behaves as the one compiled at once: the same answers, the
// same errors (the last call's), and nothing compiled until it is needed, once.
import t from 'tap';
import { Ajv } from 'ajv';
import { lazy, lazyValidator } from '../../core/lazy-validator.js';

const schema = { type: 'object', additionalProperties: false, required: ['name'], properties: { name: { type: 'string', maxLength: 5 } } } as const;

t.test('compiled once, on the first call; answers and errors as ajv', async (t) => {
  let compiles = 0;
  const validate = lazyValidator(() => {
    compiles++;
    return new Ajv({ strict: true }).compile<{ name: string }>(schema);
  });
  const eager = new Ajv({ strict: true }).compile<{ name: string }>(schema);
  t.equal(compiles, 0, 'nothing compiled before use');
  for (const body of [{ name: 'ok' }, { name: 'too long' }, {}, { name: 'a', other: 1 }, 'x', { name: 'b' }]) {
    t.equal(validate(body), eager(body), JSON.stringify(body));
    t.same(validate.errors, eager.errors, `errors for ${JSON.stringify(body)}`);
  }
  t.equal(compiles, 1, 'compiled once');
  t.same(validate.schema, schema);
});

t.test('a schema ajv refuses throws on first use', async (t) => {
  const validate = lazyValidator(() => new Ajv({ strict: true }).compile({ type: 'object', unknownKeyword: 1 }));
  t.throws(() => validate({}), /unknown keyword/);
});

t.test('lazy: made once, on first use', async (t) => {
  let made = 0;
  const value = lazy(() => ++made);
  t.equal(made, 0);
  t.equal(value(), 1);
  t.equal(value(), 1);
  t.equal(made, 1);
});
