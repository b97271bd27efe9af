// Stored responses (POST /v1/responses with `store`, OpenAI's default): kept in the durable store
// for MODELGATE_RESPONSES_RETENTION days, readable and continuable only with the key that made
// them; so are their output items, by id, for item_reference input items. The answer is written
// only once its row is (save resolves then), so a client that continues or deletes it next, on any
// replica, finds it. A database that does not answer a read is a 503. Expired rows are never
// served and are deleted hourly, in batches.
import type { Logger } from 'pino';
import type { Store } from '../store/database.js';
import { defineSettings } from '../settings.js';
import { GatewayError } from '../errors.js';
import type { InputItem, OutputItem, ResponseObject } from './types.js';

export const responsesSettings = defineSettings({
  MODELGATE_RESPONSES_RETENTION: {
    type: 'integer',
    default: 30,
    minimum: 1,
    maximum: 36500,
    description:
      'Days a stored response (POST /v1/responses with `store`, the default) can be read with GET /v1/responses/{id} and continued with previous_response_id; then it is deleted. `store: false` keeps nothing.',
  },
});

const DAY_MS = 86_400_000;
const SWEEP_EVERY_MS = 3_600_000;
const SWEEP_BATCH = 1000;

export interface StoredResponse {
  id: string;
  keyId: string;
  tenant: string;
  createdAt: number;
  response: ResponseObject;
  /** The conversation up to and including this answer, as input items. */
  items: InputItem[];
}

export class ResponseStore {
  private readonly writes = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: Store,
    private readonly retentionDays: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.timer.unref();
  }

  /**
   * Keeps a finished response; resolves once it is written (a failure is logged, never thrown).
   * The answer waits for it, so a client that continues or deletes it next, on any replica, finds it.
   */
  save(record: StoredResponse): Promise<void> {
    const expiresAt = record.createdAt + this.retentionDays * DAY_MS;
    const items = record.response.output.map((item) => ({ item_id: item.id, response_id: record.id, key_id: record.keyId, expires_at: expiresAt, item: JSON.stringify(item) }));
    const write = this.store.db
      .transaction()
      .execute(async (trx) => {
        await trx
          .insertInto('responses')
          .values({
            id: record.id,
            key_id: record.keyId,
            tenant: record.tenant,
            created_at: record.createdAt,
            expires_at: expiresAt,
            response: JSON.stringify(record.response),
            items: JSON.stringify(record.items),
          })
          .execute();
        if (items.length > 0) await trx.insertInto('response_items').values(items).execute();
      })
      .catch((error: unknown) => this.logger.error({ err: error, responseId: record.id }, 'a stored response could not be written'))
      .finally(() => {
        this.writes.delete(write);
      });
    this.writes.add(write);
    return write.then(() => undefined);
  }

  /** The response `id` if `keyId` made it and it has not expired. */
  async get(id: string, keyId: string): Promise<StoredResponse | undefined> {
    const row = await this.read(() =>
      this.store.db.selectFrom('responses').selectAll().where('id', '=', id).where('key_id', '=', keyId).where('expires_at', '>', Date.now()).executeTakeFirst(),
    );
    if (!row) return undefined;
    return { id: row.id, keyId: row.key_id, tenant: row.tenant, createdAt: Number(row.created_at), response: JSON.parse(row.response), items: JSON.parse(row.items) };
  }

  /** The output items of `keyId`'s unexpired stored responses with these ids (item_reference). */
  async items(ids: readonly string[], keyId: string): Promise<Map<string, OutputItem>> {
    const rows = await this.read(() =>
      this.store.db.selectFrom('response_items').select(['item_id', 'item']).where('item_id', 'in', ids).where('key_id', '=', keyId).where('expires_at', '>', Date.now()).execute(),
    );
    return new Map(rows.map((row) => [row.item_id, JSON.parse(row.item) as OutputItem]));
  }

  /** Deletes the response `id` of `keyId`; false when there was none. */
  async delete(id: string, keyId: string): Promise<boolean> {
    return this.read(async () => {
      const result = await this.store.db.deleteFrom('responses').where('id', '=', id).where('key_id', '=', keyId).executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) return false;
      await this.store.db.deleteFrom('response_items').where('response_id', '=', id).where('key_id', '=', keyId).execute();
      return true;
    });
  }

  /** A query on a client's behalf: a database that cannot answer is a 503 the client may retry, not a 500. */
  private async read<T>(query: () => Promise<T>): Promise<T> {
    try {
      return await query();
    } catch (error) {
      this.logger.error({ err: error }, 'stored responses could not be read');
      throw new GatewayError('store_unavailable', { message: 'Stored responses are unavailable: the database did not answer.', cause: error });
    }
  }

  /** Deletes expired rows, a batch at a time; returns how many. */
  async sweep(now = Date.now()): Promise<number> {
    let deleted = 0;
    try {
      for (;;) {
        const batch = await this.store.db.selectFrom('responses').select('id').where('expires_at', '<=', now).limit(SWEEP_BATCH).execute();
        if (batch.length === 0) break;
        const result = await this.store.db.deleteFrom('responses').where('id', 'in', batch.map((row) => row.id)).executeTakeFirst();
        deleted += Number(result.numDeletedRows);
        if (batch.length < SWEEP_BATCH) break;
      }
      for (;;) {
        const batch = await this.store.db.selectFrom('response_items').select('item_id').where('expires_at', '<=', now).limit(SWEEP_BATCH).execute();
        if (batch.length === 0) break;
        await this.store.db.deleteFrom('response_items').where('item_id', 'in', batch.map((row) => row.item_id)).execute();
        if (batch.length < SWEEP_BATCH) break;
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'expired stored responses could not be deleted; trying again in an hour');
    }
    return deleted;
  }

  /** Waits for the inserts under way. */
  async settled(): Promise<void> {
    await Promise.all([...this.writes]);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.settled();
  }
}
