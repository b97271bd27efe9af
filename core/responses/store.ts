// Stored responses (POST /v1/responses with `store`, OpenAI's default): kept in the durable store
// for MODELGATE_RESPONSES_RETENTION days, readable and continuable only with the key that made
// them. A response is remembered in memory the moment its last byte is written and inserted
// after, off the request's path: a client that continues it at once finds it. Expired rows are
// never served and are deleted hourly, in batches.
import type { Logger } from 'pino';
import type { Store } from '../store/database.js';
import { defineSettings } from '../settings.js';
import type { InputItem, ResponseObject } from './types.js';

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
  /** Remembered, not yet inserted: found by get() meanwhile. */
  private readonly pending = new Map<string, StoredResponse>();
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

  /** Keeps a finished response; the insert happens in the background (a failure is logged). */
  save(record: StoredResponse): void {
    this.pending.set(record.id, record);
    const write = this.store.db
      .insertInto('responses')
      .values({
        id: record.id,
        key_id: record.keyId,
        tenant: record.tenant,
        created_at: record.createdAt,
        expires_at: record.createdAt + this.retentionDays * DAY_MS,
        response: JSON.stringify(record.response),
        items: JSON.stringify(record.items),
      })
      .execute()
      .catch((error: unknown) => this.logger.error({ err: error, responseId: record.id }, 'a stored response could not be written'))
      .finally(() => {
        this.pending.delete(record.id);
        this.writes.delete(write);
      });
    this.writes.add(write);
  }

  /** The response `id` if `keyId` made it and it has not expired. */
  async get(id: string, keyId: string): Promise<StoredResponse | undefined> {
    const pending = this.pending.get(id);
    if (pending) return pending.keyId === keyId ? pending : undefined;
    const row = await this.store.db
      .selectFrom('responses')
      .selectAll()
      .where('id', '=', id)
      .where('key_id', '=', keyId)
      .where('expires_at', '>', Date.now())
      .executeTakeFirst();
    if (!row) return undefined;
    return { id: row.id, keyId: row.key_id, tenant: row.tenant, createdAt: Number(row.created_at), response: JSON.parse(row.response), items: JSON.parse(row.items) };
  }

  /** Deletes the response `id` of `keyId`; false when there was none. */
  async delete(id: string, keyId: string): Promise<boolean> {
    const pending = this.pending.get(id);
    if (pending && pending.keyId !== keyId) return false;
    if (pending) await this.settled();
    const result = await this.store.db.deleteFrom('responses').where('id', '=', id).where('key_id', '=', keyId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
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
