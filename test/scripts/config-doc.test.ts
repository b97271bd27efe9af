import t from 'tap';
import { readFileSync } from 'node:fs';
import { CONFIG_DOC_PATH, renderConfigDoc } from '../../scripts/config-doc.js';
import { allSettings } from '../../core/app.js';
import { variantName } from '../../core/settings.js';

t.test('docs/configuration.md is generated from the schemas and up to date (npm run config-doc)', async (t) => {
  t.equal(readFileSync(CONFIG_DOC_PATH, 'utf8'), renderConfigDoc());
});

t.test('it has a row for every setting the gateway reads, with its default', async (t) => {
  const text = renderConfigDoc();
  for (const schema of allSettings()) {
    for (const [name, spec] of Object.entries(schema)) {
      const row = text.split('\n').find((line) => line.startsWith(`| \`${name}\` |`));
      if (!row) {
        t.fail(`no row for ${name}`);
        continue;
      }
      if (spec.default !== undefined && !Array.isArray(spec.default)) t.match(row, `\`${String(spec.default)}\``, `${name}: its default`);
      for (const env of spec.variants ?? []) t.match(row, variantName(name, env), `${name}: its ${env} variant`);
    }
  }
});

t.test('settings are grouped under the part that owns them', async (t) => {
  const text = renderConfigDoc();
  const section = (heading: string) => text.slice(text.indexOf(`\n### ${heading}\n`), text.indexOf('\n### ', text.indexOf(`\n### ${heading}\n`) + 1));
  t.match(section('`rate-limit`'), '`MODELGATE_RATE_LIMIT_RPM`');
  t.match(section('`cost-guard`'), '`MODELGATE_DAILY_COST_LIMIT`');
  t.match(section('`anthropic`'), '`ANTHROPIC_VERSION`');
  t.notMatch(section('`anthropic`'), '`OPENAI_API_KEY`');
});
