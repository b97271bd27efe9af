import t from 'tap';
import { Ajv } from 'ajv';
import { loadConfig, mergeSchemas, settingsJsonSchema, ConfigError } from '../../core/config.js';
import { defineSettings } from '../../core/settings.js';
import { allSettings } from '../../core/app.js';

const schema = defineSettings({
  MODELGATE_API_KEY: { type: 'string', required: true, pattern: '^uc_\\S+$', hint: 'begin with uc_', secret: true, variants: ['dev', 'staging', 'prod'], description: 'key' },
  MODELGATE_PORT: { type: 'integer', default: 3000, minimum: 0, maximum: 65535, description: 'port' },
  MODELGATE_RATIO: { type: 'number', default: 0.5, minimum: 0, maximum: 1, description: 'ratio' },
  MODELGATE_FLAG: { type: 'boolean', default: false, variants: ['dev'], description: 'flag' },
  MODELGATE_LIST: { type: 'array', default: [], description: 'list' },
  MODELGATE_HEADERS: { type: 'object', additionalProperties: { type: 'string' }, description: 'json' },
  MODELGATE_MODE: { type: 'string', enum: ['a', 'b'], default: 'a', description: 'mode' },
  MODELGATE_LIMIT: { type: 'number', default: 100, variants: ['dev', 'prod'], envDefaults: { dev: '10', prod: '1000' }, description: 'limit' },
  OPENAI_API_KEY: { type: 'string', secret: true, variants: ['dev', 'prod'], description: 'provider key' },
});

const load = (env: Record<string, string>) => loadConfig(env, [schema]).values as Record<string, unknown>;

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env, [schema]);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  return [];
}

t.test('defaults fill what is unset', async (t) => {
  const values = load({ MODELGATE_API_KEY: 'uc_x' });
  t.equal(values.MODELGATE_PORT, 3000);
  t.equal(values.MODELGATE_FLAG, false);
  t.same(values.MODELGATE_LIST, []);
  t.equal(values.MODELGATE_MODE, 'a');
  t.equal(values.OPENAI_API_KEY, undefined);
});

t.test('numbers and booleans are coerced, lists split, JSON parsed', async (t) => {
  const values = load({
    MODELGATE_API_KEY: 'uc_x',
    MODELGATE_PORT: ' 8080 ',
    MODELGATE_RATIO: '0.25',
    MODELGATE_FLAG: 'TRUE',
    MODELGATE_LIST: ' a, b ,,c ',
    MODELGATE_HEADERS: '{"x-team":"ml"}',
  });
  t.equal(values.MODELGATE_PORT, 8080);
  t.equal(values.MODELGATE_RATIO, 0.25);
  t.equal(values.MODELGATE_FLAG, true);
  t.same(values.MODELGATE_LIST, ['a', 'b', 'c']);
  t.same(values.MODELGATE_HEADERS, { 'x-team': 'ml' });
});

t.test('an empty optional value counts as unset and takes its default', async (t) => {
  const values = load({ MODELGATE_API_KEY: 'uc_x', MODELGATE_PORT: '', MODELGATE_MODE: '   ' });
  t.equal(values.MODELGATE_PORT, 3000);
  t.equal(values.MODELGATE_MODE, 'a');
});

t.test('per-environment variants: explicit variant > explicit plain > environment default > default', async (t) => {
  t.equal(load({ MODELGATE_API_KEY: 'uc_x', MODELGATE_ENV: 'dev' }).MODELGATE_LIMIT, 10, 'dev typical value');
  t.equal(load({ MODELGATE_API_KEY: 'uc_x', MODELGATE_ENV: 'prod' }).MODELGATE_LIMIT, 1000, 'prod typical value');
  t.equal(load({ MODELGATE_API_KEY: 'uc_x', MODELGATE_ENV: 'staging' }).MODELGATE_LIMIT, 100, 'no staging variant: the default');
  t.equal(load({ MODELGATE_API_KEY: 'uc_x', MODELGATE_ENV: 'dev', MODELGATE_LIMIT: '42' }).MODELGATE_LIMIT, 42, 'plain beats the typical value');
  t.equal(load({ MODELGATE_API_KEY: 'uc_x', MODELGATE_ENV: 'dev', MODELGATE_LIMIT: '42', MODELGATE_DEV_LIMIT: '7' }).MODELGATE_LIMIT, 7, 'variant beats plain');
  t.equal(load({ MODELGATE_API_KEY: 'uc_x', MODELGATE_PROD_LIMIT: '7' }).MODELGATE_LIMIT, 100, 'variants apply only in their environment');
  const values = load({ MODELGATE_ENV: 'prod', MODELGATE_PROD_API_KEY: 'uc_prod', OPENAI_PROD_API_KEY: 'sk-prod', OPENAI_API_KEY: 'sk-plain' });
  t.equal(values.MODELGATE_API_KEY, 'uc_prod', 'the key can come from its variant alone');
  t.equal(values.OPENAI_API_KEY, 'sk-prod');
});

t.test('every problem is named in one message', async (t) => {
  t.same(problems({}), ['MODELGATE_API_KEY: is required (missing or empty)']);
  t.same(problems({ MODELGATE_API_KEY: '' }), ['MODELGATE_API_KEY: is required (missing or empty)']);
  t.same(problems({ MODELGATE_API_KEY: 'sk-123' }), ['MODELGATE_API_KEY: must begin with uc_'], 'the secret value is not echoed');
  const all = problems({
    MODELGATE_API_KEY: 'nope',
    MODELGATE_PORT: 'eighty',
    MODELGATE_RATIO: '2',
    MODELGATE_FLAG: 'maybe',
    MODELGATE_MODE: 'fastest',
    MODELGATE_HEADERS: '{oops',
    MODELGATE_ENV: 'qa',
  });
  t.equal(all.length, 7);
  t.match(all.join('\n'), /MODELGATE_ENV: must be one of dev, staging, prod \(got "qa"\)/);
  t.match(all.join('\n'), /MODELGATE_PORT: must be an integer \(got "eighty"\)/);
  t.match(all.join('\n'), /MODELGATE_RATIO: must be <= 1 \(got "2"\)/);
  t.match(all.join('\n'), /MODELGATE_FLAG: must be true or false \(got "maybe"\)/);
  t.match(all.join('\n'), /MODELGATE_MODE: must be one of a, b \(got "fastest"\)/);
  t.match(all.join('\n'), /MODELGATE_HEADERS: must be a JSON object/);
  const error = (() => {
    try {
      loadConfig({ MODELGATE_PORT: 'x' }, [schema]);
    } catch (e) {
      return e as Error;
    }
  })();
  t.match(error?.message, /^Invalid configuration:\n {2}- /, 'one message, one line per problem');
});

t.test('a problem in a variant names the variant', async (t) => {
  t.same(problems({ MODELGATE_API_KEY: 'uc_x', MODELGATE_ENV: 'dev', MODELGATE_DEV_LIMIT: 'ten' }), ['MODELGATE_DEV_LIMIT: must be a number (got "ten")']);
});

t.test('unknown MODELGATE_ variables are reported as likely typos, variants are not', async (t) => {
  const config = loadConfig({ MODELGATE_API_KEY: 'uc_x', MODELGATE_PORTT: '1', MODELGATE_PROD_LIMIT: '5', PATH: '/bin' }, [schema]);
  t.same(config.unknown, ['MODELGATE_PORTT']);
});

t.test("the gateway's own schemas: the issue's examples fail with their reasons", async (t) => {
  const fail = (env: Record<string, string>) => {
    try {
      loadConfig(env, allSettings());
      return '';
    } catch (error) {
      return (error as Error).message;
    }
  };
  t.match(fail({}), /MODELGATE_API_KEY: is required/);
  t.match(fail({ MODELGATE_API_KEY: 'abc' }), /MODELGATE_API_KEY: must begin with uc_/);
  t.match(fail({ MODELGATE_API_KEY: 'uc_x', MODELGATE_ROUTING_STRATEGY: 'fastest' }), /MODELGATE_ROUTING_STRATEGY: must be one of cost_optimized, quality_optimized, performance_optimized \(got "fastest"\)/);
  t.match(fail({ MODELGATE_API_KEY: 'uc_x', MODELGATE_DAILY_COST_LIMIT: 'lots' }), /MODELGATE_DAILY_COST_LIMIT: must be a number \(got "lots"\)/);
  t.equal(fail({ MODELGATE_API_KEY: 'uc_x' }), '', 'the defaults are valid');
});

t.test('every invalid setting is reported in one pass, IP lists and provider names included', async (t) => {
  const { createApp } = await import('../../core/app.js');
  const error = await createApp({
    MODELGATE_API_KEY: 'uc_x',
    MODELGATE_PORT: 'eighty',
    MODELGATE_BLOCKED_IPS: '10.0.0.1,10.0.0.300',
    MODELGATE_ALLOWED_IPS: 'nope',
    MODELGATE_TRUSTED_PROXIES: '10.0.0.0/33',
    MODELGATE_PROVIDER_WEIGHTS: 'openai:2,azure:1',
    MODELGATE_ROUTING_STRATEGY: 'fastest',
  }).then(
    async (app) => {
      await app.close();
      return undefined;
    },
    (thrown: unknown) => thrown,
  );
  t.ok(error instanceof ConfigError, 'startup fails with a ConfigError, before any plugin is built');
  t.same([...(error as ConfigError).problems].sort(), [
    'MODELGATE_ALLOWED_IPS: "nope" is not an IP address or CIDR range',
    'MODELGATE_BLOCKED_IPS: "10.0.0.300" is not an IP address or CIDR range',
    'MODELGATE_PORT: must be an integer (got "eighty")',
    'MODELGATE_PROVIDER_WEIGHTS: unknown provider "azure" (known: openai, anthropic, google, cohere, mistral, custom)',
    'MODELGATE_ROUTING_STRATEGY: must be one of cost_optimized, quality_optimized, performance_optimized (got "fastest")',
    'MODELGATE_TRUSTED_PROXIES: "10.0.0.0/33" is not an IP address or CIDR range',
  ]);
});

t.test('no setting is declared twice across the gateway', async (t) => {
  t.doesNotThrow(() => loadConfig({ MODELGATE_API_KEY: 'uc_x' }, allSettings()));
});

t.test("the settings' schema is valid by ajv's meta-schema (the gateway does not check it at each start)", async (t) => {
  const ajv = new Ajv({ strict: true });
  for (const specs of [mergeSchemas(allSettings()), mergeSchemas([schema])]) {
    t.ok(ajv.validateSchema(settingsJsonSchema(specs)), ajv.errorsText(ajv.errors));
  }
  const bad = defineSettings({ MODELGATE_X: { type: 'string', pattern: '^a', description: 'x', colour: 'red' } as never });
  t.throws(() => loadConfig({}, [bad]), /unknown keyword/, 'an unknown keyword is still refused');
});

t.test('at boot the gateway warns about likely typos', async (t) => {
  const { startGateway } = await import('../helpers/gateway.js');
  const gateway = await startGateway({ MODELGATE_PORTT: '9', MODELGATE_AB_TESTING_ENABLED: 'true', MODELGATE_CACHE_TTL: '60' });
  t.teardown(() => gateway.close());
  t.match(gateway.logs, [{ level: 'warn', setting: 'MODELGATE_PORTT', msg: 'unknown setting ignored (typo?)' }]);
  t.notOk(gateway.logs.some((line) => line.setting === 'MODELGATE_AB_TESTING_ENABLED' || line.setting === 'MODELGATE_CACHE_TTL'), 'settings the gateway reads are not warned about');
});
