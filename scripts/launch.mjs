// Runs a compiled entry point, never the compiler: `npm start` (server), `npm run demo` (demo) and
// `npm run migrate` (migrate). A missing, incomplete or stale dist/ stops it with one line naming
// the command to run instead (build-stamp.mjs). Plain JavaScript: it must run before any build.
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildProblem } from './build-stamp.mjs';

const ENTRIES = {
  server: 'dist/core/main.js',
  demo: 'dist/demo/main.js',
  migrate: 'dist/core/store/migrate-main.js',
};

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const name = process.argv[2] ?? 'server';
const entry = ENTRIES[name];
if (!entry) {
  console.error(`modelgate: unknown entry point "${name}" (one of: ${Object.keys(ENTRIES).join(', ')})`);
  process.exit(2);
}
const problem = buildProblem(root);
if (problem) {
  console.error(`modelgate: ${problem}`);
  process.exit(1);
}
await import(pathToFileURL(join(root, entry)).href);
