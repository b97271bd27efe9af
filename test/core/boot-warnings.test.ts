// What an operator is told once at boot when the configuration cannot serve anyone: no provider
// configured, or an IP allow-list switched on with nothing in it.
import t from 'tap';
import { startGateway } from '../helpers/gateway.js';

const warnings = (logs: Array<Record<string, unknown>>, pattern: RegExp) =>
  logs.filter((line) => line.level === 'warn' && typeof line.msg === 'string' && pattern.test(line.msg));

t.test('no provider configured: one warning naming the settings that configure one', async (t) => {
  const bare = await startGateway({});
  t.teardown(() => bare.close());
  const found = warnings(bare.logs, /no provider is configured/);
  t.equal(found.length, 1, 'warned once');
  t.match(found[0]?.msg, /404 Model unavailable/);
  t.same(found[0]?.settings, ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GOOGLE_API_KEY', 'COHERE_API_KEY', 'MISTRAL_API_KEY', 'CUSTOM_BASE_URL']);

  const configured = await startGateway({ MISTRAL_API_KEY: 'sk-mistral' });
  t.teardown(() => configured.close());
  t.same(warnings(configured.logs, /no provider is configured/), [], 'silent once one provider is configured');
});

t.test('IP whitelisting on with an empty allow-list: one warning', async (t) => {
  const empty = await startGateway({ OPENAI_API_KEY: 'sk-x', MODELGATE_IP_WHITELISTING_ENABLED: 'true' });
  t.teardown(() => empty.close());
  const found = warnings(empty.logs, /MODELGATE_ALLOWED_IPS is empty/);
  t.equal(found.length, 1, 'warned once');
  t.match(found[0]?.msg, /refused with 403/);

  const listed = await startGateway({ OPENAI_API_KEY: 'sk-x', MODELGATE_IP_WHITELISTING_ENABLED: 'true', MODELGATE_ALLOWED_IPS: '127.0.0.1' });
  t.teardown(() => listed.close());
  t.same(warnings(listed.logs, /MODELGATE_ALLOWED_IPS is empty/), [], 'silent when the list has entries');
});
