import t from 'tap';
import { compose, type Step } from '../../core/pipeline.js';
import { GatewayError, isGatewayError, toGatewayError } from '../../core/errors.js';
import type { RequestContext } from '../../core/context.js';

const ctx = () => ({}) as RequestContext;

function recorder() {
  const seen: string[] = [];
  const step = (name: string, behaviour: 'pass' | 'stop' | 'throw' = 'pass'): Step => ({
    name,
    async handle(_ctx, next) {
      seen.push(`${name}:in`);
      if (behaviour === 'stop') return;
      if (behaviour === 'throw') throw new GatewayError('rate_limit_exceeded');
      await next();
      seen.push(`${name}:out`);
    },
  });
  return { seen, step };
}

t.test('steps run in array order and see the outcome on the way back', async (t) => {
  const { seen, step } = recorder();
  const run = compose([step('a'), step('b'), step('c')], async () => {
    seen.push('terminal');
  });
  await run(ctx());
  t.same(seen, ['a:in', 'b:in', 'c:in', 'terminal', 'c:out', 'b:out', 'a:out']);
});

t.test('a step that answers short-circuits the rest', async (t) => {
  const { seen, step } = recorder();
  const run = compose([step('a'), step('cache', 'stop'), step('router')], async () => {
    seen.push('terminal');
  });
  await run(ctx());
  t.same(seen, ['a:in', 'cache:in', 'a:out']);
});

t.test('a refusal propagates to the outer steps as a GatewayError', async (t) => {
  const { seen, step } = recorder();
  const outer: Step = {
    name: 'observer',
    async handle(_ctx, next) {
      try {
        await next();
      } catch (error) {
        seen.push(`observer saw ${(error as GatewayError).status}`);
        throw error;
      }
    },
  };
  const run = compose([outer, step('rate', 'throw'), step('never')], async () => {});
  await t.rejects(run(ctx()), { status: 429, message: 'Rate limit exceeded' });
  t.same(seen, ['rate:in', 'observer saw 429']);
});

t.test('calling next twice is a programming error', async (t) => {
  const run = compose(
    [
      {
        name: 'double',
        async handle(_ctx, next) {
          await next();
          await next();
        },
      },
    ],
    async () => {},
  );
  await t.rejects(run(ctx()), /double called next\(\) twice/);
});

t.test('errors render as OpenAI error bodies with the spec texts', async (t) => {
  t.same(new GatewayError('invalid_api_key').toBody(), { error: { message: 'Invalid API key', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
  t.same(new GatewayError('api_key_expired').toBody().error.message, 'API key expired');
  t.same(new GatewayError('model_not_found', { param: 'model' }).toBody(), { error: { message: 'Model not found', type: 'invalid_request_error', param: 'model', code: 'model_not_found' } });
  t.same(new GatewayError('model_unavailable').toBody().error.message, 'Model unavailable');
  t.same(new GatewayError('rate_limit_exceeded').status, 429);
  t.same(new GatewayError('provider_unavailable').toBody(), { error: { message: 'Provider unavailable', type: 'service_unavailable_error', param: null, code: 'provider_unavailable' } });
  t.equal(new GatewayError('bad_request', { status: 422, message: 'x' }).status, 422);
});

t.test('anything that is not a GatewayError becomes an internal error that hides its text', async (t) => {
  const error = toGatewayError(new Error('database password is hunter2'));
  t.equal(error.status, 500);
  t.equal(error.message, 'Internal error');
  t.ok(isGatewayError(error));
  t.notOk(isGatewayError(new Error('x')));
});
