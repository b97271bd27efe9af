// Runs a compiled entry point, never the compiler: `npm start` (server), `npm run demo` (demo) and
// `npm run migrate` (migrate). A missing, incomplete or stale dist/ stops it with one line naming
// the command to run instead (build-stamp.mjs). Plain JavaScript: it must run before any build.
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { currentBuild } from './build-stamp.mjs';

/** Entry points, inside a build. */
const ENTRIES = {
  server: 'core/main.js',
  demo: 'demo/main.js',
  migrate: 'core/store/migrate-main.js',
};

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const name = process.argv[2] ?? 'server';
const entry = ENTRIES[name];
if (!entry) {
  console.error(`modelgate: unknown entry point "${name}" (one of: ${Object.keys(ENTRIES).join(', ')})`);
  process.exit(2);
}
const build = currentBuild(root);
if (build.problem) {
  console.error(`modelgate: ${build.problem}`);
  process.exit(1);
}
// From the build `dist` pointed at when we looked: every module of this process comes from it.
await import(pathToFileURL(join(build.dir, entry)).href);
