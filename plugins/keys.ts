// Keys: the API keys beyond the bootstrap one, kept in the durable store (plugins/keys/). Adds no
// step: it hands the auth step a key store (cached, invalidated through Redis with
// MODELGATE_STORE=redis) and the dashboard's sessions (keys/sessions.ts), and serves the admin API at /v1/admin/keys. Reads MODELGATE_API_KEY_PEPPER,
// MODELGATE_API_KEY_ROTATION_ENABLED, _INTERVAL and _GRACE (and MODELGATE_API_KEY, MODELGATE_STORE,
// REDIS_KEY_PREFIX, MODELGATE_BODY_IDLE_TIMEOUT, declared elsewhere).
import { defineSettings, type SettingsOf } from '../core/settings.js';
import type { PluginModule } from '../core/pipeline.js';
import { waitUntilReady } from '../core/redis.js';
import { EXPIRING_WINDOW_DAYS } from '../core/key-stats.js';
import { KeyRows } from './keys/key-rows.js';
import { Pepper, pepperFrom } from './keys/secrets.js';
import { VerifiedKeys } from './keys/verified-keys.js';
import { DashboardSessions } from './keys/sessions.js';
import { KeyInvalidation } from './keys/invalidation.js';
import { LastUsedWriter } from './keys/last-used.js';
import { KeyAdmin } from './keys/key-admin.js';
import { keyAdminRoutes } from './keys/admin-routes.js';
import { ExpiringKeys } from './keys/expiring.js';
import { AlertStates } from '../core/alert-states.js';
import type { Notification } from '../core/events.js';

const settings = defineSettings({
  MODELGATE_API_KEY_PEPPER: {
    type: 'string',
    secret: true,
    minLength: 32,
    description:
      'Server-side secret keying the hash (HMAC-SHA256) under which API keys are stored; at least 32 characters (e.g. `openssl rand -base64 48`). Unset: derived from MODELGATE_API_KEY, so changing the bootstrap key then invalidates every other key (a warning says so at boot once keys exist). Changing it invalidates every key.',
  },
  MODELGATE_API_KEY_ROTATION_ENABLED: {
    type: 'boolean',
    default: false,
    description: 'Keys created or regenerated through the admin API expire MODELGATE_API_KEY_ROTATION_INTERVAL days later (an explicit expires_at may only be earlier).',
  },
  MODELGATE_API_KEY_ROTATION_INTERVAL: { type: 'integer', default: 90, minimum: 1, maximum: 3650, description: 'Days a key lives when rotation is on.' },
  MODELGATE_API_KEY_ROTATION_GRACE: {
    type: 'integer',
    default: 86400,
    minimum: 0,
    maximum: 2_592_000,
    description: 'Seconds the old secret of a regenerated key keeps working (then `API key expired`); at most 30 days. 0 ends it at once.',
  },
});

type KeySettings = SettingsOf<typeof settings>;
const BOOT_WAIT_MS = 2000;

export const keys: PluginModule<typeof settings> = {
  name: 'keys',
  settings,
  async create(values, deps) {
    const s = values as KeySettings;
    const logger = deps.logger;
    const store = deps.store();
    const rows = new KeyRows(store.db, store.engine);
    // Said only to an operator who uses keys: one without any has nothing to lose.
    if (s.MODELGATE_API_KEY_PEPPER === undefined && (await rows.any())) {
      logger.warn('keys: MODELGATE_API_KEY_PEPPER is not set, so stored keys are hashed under a pepper derived from MODELGATE_API_KEY: changing that key invalidates every other key');
    }
    const pepper = new Pepper(pepperFrom(s.MODELGATE_API_KEY_PEPPER, values.MODELGATE_API_KEY as string));
    const lastUsed = new LastUsedWriter(rows, logger);
    let invalidation: KeyInvalidation | undefined;
    const verified = new VerifiedKeys({ rows, pepper, logger, subscribed: () => invalidation?.subscribed ?? false, used: (id) => lastUsed.used(id) });
    if (values.MODELGATE_STORE === 'redis') {
      const redis = deps.redis();
      invalidation = new KeyInvalidation(redis, values.REDIS_KEY_PREFIX as string, logger, (change) => verified.invalidate(change.id, change.version), () => verified.clear());
      await waitUntilReady(redis, BOOT_WAIT_MS);
    }
    deps.keyStores.push(verified);
    deps.sessions.provide(new DashboardSessions(store.db, rows, pepper, values.MODELGATE_API_KEY as string));
    let expiringSoon = 0;
    const countExpiring = async () => {
      const now = Date.now();
      try {
        expiringSoon = await rows.countExpiring(now, now + EXPIRING_WINDOW_DAYS * 86_400_000);
      } catch (error) {
        logger.warn({ err: (error as Error).message }, 'keys: cannot count the keys expiring soon');
      }
    };
    await countExpiring();
    const notify = (notification: Notification) => deps.events.emit('notify', notification);
    const expiring = new ExpiringKeys(rows, new AlertStates(store), notify, logger);
    // Keys cross into the window as time passes, not only when changed: counted again every minute,
    // when the sealed copies of regenerated secrets past their replay window are also erased.
    const counting = setInterval(() => {
      void countExpiring();
      void expiring.check();
      admin.forgetOld().catch((error: Error) => logger.warn({ err: error.message }, 'keys: cannot erase old regenerated secrets'));
    }, 60_000).unref();
    deps.keyStats.provide({ expiringSoon: () => expiringSoon, refresh: countExpiring });
    const admin = new KeyAdmin(
      store.db,
      rows,
      pepper,
      { enabled: s.MODELGATE_API_KEY_ROTATION_ENABLED, intervalDays: s.MODELGATE_API_KEY_ROTATION_INTERVAL, graceSeconds: s.MODELGATE_API_KEY_ROTATION_GRACE },
      async (row) => {
        verified.invalidate(row.id, row.version);
        await invalidation?.publish({ id: row.id, version: row.version });
        void countExpiring();
      },
    );
    return {
      name: 'keys',
      routes: keyAdminRoutes({ admin, rows, notify, bodyIdleMs: values.MODELGATE_BODY_IDLE_TIMEOUT as number }),
      async close() {
        clearInterval(counting);
        await expiring.check().catch(() => undefined);
        await invalidation?.close();
        await lastUsed.close();
      },
    };
  },
};
