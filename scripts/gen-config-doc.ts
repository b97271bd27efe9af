// Writes docs/configuration.md from the settings schemas. Run: npm run config-doc
import { writeFileSync } from 'node:fs';
import { CONFIG_DOC_PATH, renderConfigDoc } from './config-doc.js';

writeFileSync(CONFIG_DOC_PATH, renderConfigDoc());
console.log(`wrote ${CONFIG_DOC_PATH}`);
