// Version 0.1 kept the embedded store's money in MODELGATE_DATA_DIR/ledger.db: spend per period,
// usage per day, the alert rules that fired and the pause. An upgrade must not reset anyone's spend,
// so on SQLite this copies that file's usage into the daily rollups (from which budgets are read),
// and its fired rules and pause into their tables, once. The old file is only read; it can be
// deleted afterwards. (PostgreSQL came with this version: nothing to import there.)
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import type { Migration } from '../migrate.js';

const LEGACY_FILE = 'ledger.db';

interface LegacyUsage {
  day: string;
  tenant: string;
  key_id: string;
  provider: string;
  model: string;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_nano: number;
  cache_hits: number;
  saved_nano: number;
}

export const importV0Ledger: Migration = {
  name: '0004_import_v0_ledger',
  async up(db, store) {
    if (store.engine !== 'sqlite') return;
    const file = join(dirname(store.location), LEGACY_FILE);
    if (!existsSync(file)) return;
    const legacy = new Database(file, { readonly: true, fileMustExist: true });
    try {
      const has = (table: string) => legacy.prepare("select 1 from sqlite_master where type = 'table' and name = ?").get(table) !== undefined;
      if (has('usage')) {
        const rows = legacy.prepare('select * from usage').all() as LegacyUsage[];
        for (let i = 0; i < rows.length; i += 500) {
          await db
            .insertInto('usage_daily')
            .values(
              rows.slice(i, i + 500).map((row) => ({
                bucket: Date.parse(`${row.day}T00:00:00Z`),
                tenant: row.tenant,
                key_id: row.key_id,
                provider: row.provider,
                model: row.model,
                // 0.1 counted answered requests and cache hits, not statuses.
                status: 200,
                requests: row.requests,
                prompt_tokens: row.prompt_tokens,
                completion_tokens: row.completion_tokens,
                cost_nano: row.cost_nano,
                cache_hits: row.cache_hits,
                saved_nano: row.saved_nano,
              })),
            )
            .execute();
        }
      }
      if (has('alerts')) {
        const fired = legacy.prepare('select period, rule, fired_at from alerts').all() as Array<{ period: string; rule: string; fired_at: number }>;
        if (fired.length > 0) await db.insertInto('budget_alerts').values(fired.map((row) => ({ scope: 'global', ...row }))).execute();
      }
      const pause = has('state') ? (legacy.prepare("select value from state where name = 'pause'").get() as { value: string } | undefined) : undefined;
      if (pause) {
        const state = JSON.parse(pause.value) as { period: string; periodKey: string; threshold: number; until: number };
        await db.insertInto('budget_pauses').values({ scope: 'global', period: state.period, period_key: state.periodKey, threshold: state.threshold, until: state.until }).execute();
      }
    } finally {
      legacy.close();
    }
  },
};
