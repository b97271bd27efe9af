// The memory cache's bound is what it really takes: a child process fills a 20 MiB cache with
// ~900-byte answers under unique keys and turns it over three times (test/helpers/fill-memory-cache.ts);
// after a full GC its RSS grew by at most the bound × 1.15 + 4 MB. The child runs with a 1 MB semi
// space so the young generation, a per-process constant (docs/cache.md), is not counted as the
// cache's. A buffer per entry charged a fixed 600 B grew by 38-49 MB here.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BOUND_MB = 20;
const script = fileURLToPath(new URL('../helpers/fill-memory-cache.ts', import.meta.url));

t.test('a memory cache filled to its bound and turned over grows RSS by at most the bound × 1.15 + 4 MB', async (t) => {
  const child = spawnSync(process.execPath, ['--expose-gc', '--max-semi-space-size=1', '--import=tsx', script], {
    env: { ...process.env, CACHE_BOUND_MB: String(BOUND_MB) },
    encoding: 'utf8',
  });
  t.equal(child.status, 0, child.stderr);
  const grown = JSON.parse(child.stdout) as { entries: number; charged: number; payloadPerEntry: number; rss: number; heapUsed: number; external: number };
  const bound = BOUND_MB * 1024 * 1024;
  t.ok(grown.payloadPerEntry > 850 && grown.payloadPerEntry < 950, `realistic entries: ${grown.payloadPerEntry.toFixed(0)} bytes each`);
  t.ok(grown.charged <= bound, 'the charged bytes stay within the bound');
  const limit = bound * 1.15 + 4 * 1024 * 1024;
  t.ok(grown.rss <= limit, `RSS grew ${(grown.rss / 1048576).toFixed(1)} MB for ${grown.entries} entries (limit ${(limit / 1048576).toFixed(1)} MB)`);
  t.ok(grown.heapUsed + grown.external <= bound + 2 * 1024 * 1024, `heap and external memory grew ${((grown.heapUsed + grown.external) / 1048576).toFixed(1)} MB: the bound and at most a slab's rounding`);
});
