// The state of an alert (a provider down, the error rate high, a key expiring), shared by every
// replica through the database: firing or resolved. Each change is one conditional statement, so
// when replicas see the same condition together exactly one of them moves the state and sends the
// event. An alert fires again only a cool-down after it last fired, so a flapping condition sends
// one alert per cool-down, not one per flap.
import type { Store } from './store/database.js';

export class AlertStates {
  constructor(private readonly store: Store) {}

  /** Moves (kind, subject) to firing; true for the one caller that did. */
  async fire(kind: string, subject: string, cooldownMs: number, now = Date.now()): Promise<boolean> {
    const inserted = await this.store.db
      .insertInto('alert_states')
      .values({ kind, subject, state: 'firing', fired_at: now, changed_at: now })
      .onConflict((conflict) => conflict.columns(['kind', 'subject']).doNothing())
      .returning('kind')
      .executeTakeFirst();
    if (inserted) return true;
    const updated = await this.store.db
      .updateTable('alert_states')
      .set({ state: 'firing', fired_at: now, changed_at: now })
      .where('kind', '=', kind)
      .where('subject', '=', subject)
      .where('state', '=', 'resolved')
      .where('fired_at', '<=', now - cooldownMs)
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) > 0;
  }

  /** Moves a firing (kind, subject) to resolved; the time it fired for the one caller that did. */
  async resolve(kind: string, subject: string, now = Date.now()): Promise<number | undefined> {
    const row = await this.store.db.selectFrom('alert_states').select('fired_at').where('kind', '=', kind).where('subject', '=', subject).where('state', '=', 'firing').executeTakeFirst();
    if (!row) return undefined;
    const updated = await this.store.db
      .updateTable('alert_states')
      .set({ state: 'resolved', changed_at: now })
      .where('kind', '=', kind)
      .where('subject', '=', subject)
      .where('state', '=', 'firing')
      .where('fired_at', '=', row.fired_at)
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) > 0 ? Number(row.fired_at) : undefined;
  }

  /** Subjects of `kind` firing now. */
  async firing(kind: string): Promise<string[]> {
    const rows = await this.store.db.selectFrom('alert_states').select('subject').where('kind', '=', kind).where('state', '=', 'firing').execute();
    return rows.map((row) => row.subject);
  }

  /**
   * Forgets states resolved before `resolvedBefore` (past any cool-down), and every state fired
   * before `firedBefore`: markers of things long over (a key's expiry, a month's exceeded budget),
   * or an alert firing that long, which then fires again as a reminder.
   */
  async sweep(resolvedBefore: number, firedBefore: number): Promise<void> {
    await this.store.db
      .deleteFrom('alert_states')
      .where((eb) => eb.or([eb.and([eb('state', '=', 'resolved'), eb('changed_at', '<', resolvedBefore)]), eb('fired_at', '<', firedBefore)]))
      .execute();
  }
}
