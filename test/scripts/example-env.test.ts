import t from 'tap';
import { readFileSync } from 'node:fs';
import { EXAMPLE_ENV_PATH, renderExampleEnv } from '../../scripts/example-env.js';
import { allSettings } from '../../core/app.js';

t.test('config/example.env is generated from the schemas and up to date (npm run example-env)', async (t) => {
  t.equal(readFileSync(EXAMPLE_ENV_PATH, 'utf8'), renderExampleEnv());
});

t.test('it documents every setting the gateway reads', async (t) => {
  const text = renderExampleEnv();
  for (const schema of allSettings()) {
    for (const name of Object.keys(schema)) t.match(text, new RegExp(`^#? ?${name}=`, 'm'), name);
  }
});
