// Webhook endpoints: where outbound webhooks go, each with the event types it takes. Registered
// through the admin API (/v1/admin/webhooks) or bootstrapped from MODELGATE_WEBHOOK_URL (rewritten
// at every boot, id `wh_settings`). Fan-out reads a copy held in memory, refreshed every few seconds
// and at once after a change here, so emitting an event never waits on the database.
import type { Store } from '../../core/store/database.js';
import type { WebhookEndpointTable } from '../../core/store/schema.js';
import { newId } from './outbox.js';

export interface Endpoint {
  id: string;
  url: string;
  description: string | null;
  /** Event types it takes; `*` takes every type. */
  eventTypes: string[];
  enabled: boolean;
  disabledReason: string | null;
  source: 'api' | 'settings';
  createdAt: number;
  updatedAt: number;
}

export interface EndpointChange {
  url?: string;
  description?: string | null;
  eventTypes?: string[];
  enabled?: boolean;
}

export const SETTINGS_ENDPOINT_ID = 'wh_settings';
/** What the settings endpoint's row holds for its URL (the setting is secret: never stored). */
export const SETTINGS_URL = '(MODELGATE_WEBHOOK_URL)';
/** Endpoints at most: a bound on the fan-out of each event (and on what an admin key can register). */
export const MAX_ENDPOINTS = 100;
const REFRESH_MS = 5_000;

export class Endpoints {
  private cached: Endpoint[] = [];
  private refreshedAt = 0;
  private refreshing: Promise<void> | undefined;

  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly store: Store) {}

  /** Keeps the copy fresh whether or not events flow. */
  start(): void {
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), REFRESH_MS).unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The enabled endpoints that take `type`, from the copy in memory (refreshed in the background). */
  takers(type: string, now = Date.now()): Endpoint[] {
    if (now - this.refreshedAt > REFRESH_MS) void this.refresh().catch(() => undefined);
    // The copy is at most REFRESH_MS old while the timer runs (start()): a change on another replica
    // reaches this one's fan-out within that.
    return this.cached.filter((e) => e.enabled && (e.eventTypes.includes('*') || e.eventTypes.includes(type)));
  }

  /** Reads every endpoint again (at boot, after a change, and every few seconds while events flow). */
  refresh(): Promise<void> {
    this.refreshing ??= this.all()
      .then((all) => {
        this.cached = all;
        this.refreshedAt = Date.now();
      })
      .finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  async all(): Promise<Endpoint[]> {
    const rows = await this.store.db.selectFrom('webhook_endpoints').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map(endpoint);
  }

  async get(id: string): Promise<Endpoint | undefined> {
    const row = await this.store.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
    return row && endpoint(row);
  }

  /** A page of endpoints in creation order, after the endpoint `after`. */
  async page(limit: number, after?: Endpoint): Promise<Endpoint[]> {
    let query = this.store.db.selectFrom('webhook_endpoints').selectAll();
    if (after) query = query.where((eb) => eb.or([eb('created_at', '>', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)])]));
    const rows = await query.orderBy('created_at').orderBy('id').limit(limit).execute();
    return rows.map(endpoint);
  }

  async count(): Promise<number> {
    const row = await this.store.db.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async create(fields: { url: string; description: string | null; eventTypes: string[]; enabled: boolean }, now = Date.now()): Promise<Endpoint> {
    const row: WebhookEndpointTable = {
      id: newId('wh'),
      url: fields.url,
      description: fields.description,
      event_types: JSON.stringify(fields.eventTypes),
      enabled: fields.enabled ? 1 : 0,
      disabled_reason: null,
      source: 'api',
      created_at: now,
      updated_at: now,
    };
    await this.store.db.insertInto('webhook_endpoints').values(row).execute();
    await this.refresh();
    return endpoint(row);
  }

  async update(id: string, change: EndpointChange, now = Date.now()): Promise<Endpoint | undefined> {
    const set: Partial<WebhookEndpointTable> = { updated_at: now };
    if (change.url !== undefined) set.url = change.url;
    if (change.description !== undefined) set.description = change.description;
    if (change.eventTypes !== undefined) set.event_types = JSON.stringify(change.eventTypes);
    if (change.enabled !== undefined) {
      set.enabled = change.enabled ? 1 : 0;
      // `admin`: an admin's word, which the next boot keeps for the settings endpoint too.
      set.disabled_reason = change.enabled ? null : 'admin';
    }
    const result = await this.store.db.updateTable('webhook_endpoints').set(set).where('id', '=', id).executeTakeFirst();
    await this.refresh();
    return Number(result.numUpdatedRows) === 0 ? undefined : this.get(id);
  }

  /** Disables an endpoint the receiver said is gone (410). */
  async disable(id: string, reason: string, now = Date.now()): Promise<void> {
    await this.store.db.updateTable('webhook_endpoints').set({ enabled: 0, disabled_reason: reason, updated_at: now }).where('id', '=', id).execute();
    await this.refresh();
  }

  async remove(id: string): Promise<boolean> {
    const result = await this.store.db.deleteFrom('webhook_endpoints').where('id', '=', id).executeTakeFirst();
    await this.refresh();
    return Number(result.numDeletedRows) > 0;
  }

  /**
   * The endpoint of MODELGATE_WEBHOOK_URL, written as the settings say at every boot (or removed when
   * the setting is gone). The URL itself is a secret setting: the row holds SETTINGS_URL in its place
   * and the sender reads the setting. Disabled (a 410, an admin), it stays so until an admin enables it.
   */
  async bootstrap(url: string | undefined, eventTypes: string[], now = Date.now()): Promise<void> {
    const current = await this.get(SETTINGS_ENDPOINT_ID);
    if (!url) {
      if (current) await this.remove(SETTINGS_ENDPOINT_ID);
      return;
    }
    const values = { url: SETTINGS_URL, event_types: JSON.stringify(eventTypes), updated_at: now };
    await this.store.db
      .insertInto('webhook_endpoints')
      .values({ id: SETTINGS_ENDPOINT_ID, description: 'From MODELGATE_WEBHOOK_URL', source: 'settings', created_at: now, enabled: 1, disabled_reason: null, ...values })
      .onConflict((conflict) => conflict.column('id').doUpdateSet(values))
      .execute();
  }
}

function endpoint(row: WebhookEndpointTable): Endpoint {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    eventTypes: JSON.parse(row.event_types) as string[],
    enabled: Number(row.enabled) === 1,
    disabledReason: row.disabled_reason,
    source: row.source === 'settings' ? 'settings' : 'api',
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}
