// Writes config/example.env from the settings schemas. Run: npm run example-env
import { writeFileSync } from 'node:fs';
import { EXAMPLE_ENV_PATH, renderExampleEnv } from './example-env.js';

writeFileSync(EXAMPLE_ENV_PATH, renderExampleEnv());
console.log(`wrote ${EXAMPLE_ENV_PATH}`);
