// Where the demo keeps what the gateway writes (the SQLite ledger, budgets, usage). By default a
// directory of its own under the OS temp dir, removed when the demo stops: simulated spend must
// never land in ./data, where a real gateway started from the same folder would count it against
// its budgets. A MODELGATE_DATA_DIR the user set is theirs and is kept; a MODELGATE_DATABASE_URL is
// honoured too (the user named that database), and the banner says so (see describeStore).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface DemoDataDir {
  /** The MODELGATE_DATA_DIR the demo's gateway runs with. */
  path: string;
  /** True when the demo made it, and removes it on exit. */
  temporary: boolean;
  /** Removes a temporary directory (at most once; never the user's). Synchronous: it also runs in process 'exit'. */
  remove(): void;
}

export function demoDataDir(env: NodeJS.ProcessEnv): DemoDataDir {
  const chosen = env.MODELGATE_DATA_DIR;
  if (chosen) return { path: chosen, temporary: false, remove: () => undefined };
  const path = mkdtempSync(join(tmpdir(), 'modelgate-demo-'));
  let removed = false;
  return {
    path,
    temporary: true,
    remove() {
      if (removed) return;
      removed = true;
      rmSync(path, { recursive: true, force: true });
    },
  };
}

/** The banner's line on where data goes: the reader must be able to tell a throwaway store from a real one. */
export function describeStore(dataDir: DemoDataDir, store: { engine: string; location: string }): string {
  if (store.engine === 'postgres') {
    return `data:          PostgreSQL at ${store.location} (MODELGATE_DATABASE_URL)\n                 demo spend is recorded there and counts against that database's budgets`;
  }
  if (dataDir.temporary) return `data:          ${dataDir.path} (temporary, removed when the demo stops)`;
  return `data:          ${dataDir.path} (MODELGATE_DATA_DIR, kept: demo spend counts against its budgets)`;
}
