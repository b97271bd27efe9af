import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../core/paths.js';

const readme = readFileSync(join(projectRoot, 'README.md'), 'utf8');
const pkg = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };

t.test('the README stays a front door: at most 150 lines', async (t) => {
  const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0);
  t.ok(lines <= 150, `README.md has ${lines} lines`);
});

t.test('it gives the two set-up commands exactly as CI runs them', async (t) => {
  t.match(readme, /^npm ci && npm run demo\b/m);
  t.match(readme, /^npm ci && npm test\b/m);
});

t.test('it names every runtime dependency and what it is for', async (t) => {
  for (const name of Object.keys(pkg.dependencies)) {
    t.match(readme, new RegExp(`^\\|[^|\\n]*\`${name.replace(/[.]/g, '\\.')}\`[^|\\n]*\\|\\s*\\S`, 'm'), name);
  }
});
