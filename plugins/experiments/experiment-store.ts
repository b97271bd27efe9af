// Experiments in the durable store: create, read, page through, change state (each change is
// conditional on the state it starts from, so two replicas or two admins cannot both stop,
// finish or promote one experiment), and delete with everything recorded for it.
import { randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Store } from '../../core/store/database.js';
import type { ExperimentTable } from '../../core/store/schema.js';
import type { Definition, Status } from './definition.js';

export type ExperimentRow = Selectable<ExperimentTable>;

export interface Experiment {
  id: string;
  name: string;
  status: Status;
  definition: Definition;
  createdBy: string;
  createdAt: number;
  updatedAt: number;
  startedAt: number | null;
  endsAt: number | null;
  finishedAt: number | null;
  finishReason: string | null;
  winner: string | null;
  promotedArm: string | null;
  promotedBy: string | null;
  promotedAt: number | null;
}

/** A state change: the columns it sets. */
export type ExperimentChange = Partial<Pick<ExperimentRow, 'status' | 'definition' | 'name' | 'started_at' | 'ends_at' | 'finished_at' | 'finish_reason' | 'winner' | 'promoted_arm' | 'promoted_by' | 'promoted_at'>>;

export const EXPERIMENT_ID = /^exp_[0-9a-f]{24}$/;

export function newExperimentId(): string {
  return `exp_${randomBytes(12).toString('hex')}`;
}

function fromRow(row: ExperimentRow): Experiment {
  return {
    id: row.id,
    name: row.name,
    status: row.status as Status,
    definition: JSON.parse(row.definition) as Definition,
    createdBy: row.created_by,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    startedAt: row.started_at === null ? null : Number(row.started_at),
    endsAt: row.ends_at === null ? null : Number(row.ends_at),
    finishedAt: row.finished_at === null ? null : Number(row.finished_at),
    finishReason: row.finish_reason,
    winner: row.winner,
    promotedArm: row.promoted_arm,
    promotedBy: row.promoted_by,
    promotedAt: row.promoted_at === null ? null : Number(row.promoted_at),
  };
}

export class Experiments {
  constructor(private readonly store: Store) {}

  async create(row: ExperimentRow): Promise<Experiment> {
    await this.store.db.insertInto('experiments').values(row).execute();
    return fromRow(row);
  }

  async get(id: string): Promise<Experiment | undefined> {
    const row = await this.store.db.selectFrom('experiments').selectAll().where('id', '=', id).executeTakeFirst();
    return row && fromRow(row);
  }

  async byName(name: string): Promise<Experiment | undefined> {
    const row = await this.store.db.selectFrom('experiments').selectAll().where('name', '=', name).executeTakeFirst();
    return row && fromRow(row);
  }

  async count(status?: Status): Promise<number> {
    let query = this.store.db.selectFrom('experiments').select((eb) => eb.fn.countAll<number>().as('n'));
    if (status) query = query.where('status', '=', status);
    return Number((await query.executeTakeFirst())?.n ?? 0);
  }

  /** Newest first, `limit` of them after `after` (an experiment of the list). */
  async page(limit: number, after?: Experiment, status?: Status): Promise<Experiment[]> {
    let query = this.store.db.selectFrom('experiments').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit);
    if (status) query = query.where('status', '=', status);
    if (after) query = query.where((eb) => eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]));
    return (await query.execute()).map(fromRow);
  }

  /** What the request path follows: running experiments and promoted ones, oldest first. */
  async live(): Promise<Experiment[]> {
    const rows = await this.store.db
      .selectFrom('experiments')
      .selectAll()
      .where((eb) => eb.or([eb('status', '=', 'running'), eb('promoted_arm', 'is not', null)]))
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(fromRow);
  }

  /** Applies `change` only while the experiment is in one of `from`; the experiment after it, or undefined when it was not. */
  async change(id: string, from: readonly Status[], change: ExperimentChange, now: number): Promise<Experiment | undefined> {
    const result = await this.store.db
      .updateTable('experiments')
      .set({ ...change, updated_at: now })
      .where('id', '=', id)
      .where('status', 'in', [...from])
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return undefined;
    return this.get(id);
  }

  /** Sets the promoted arm once, while the experiment is in one of `from` (never a draft): false when it is not, or has one already. */
  async promote(id: string, arm: string, by: string, now: number, change: ExperimentChange, from: readonly Status[]): Promise<boolean> {
    const allowed = from.filter((status) => status !== 'draft');
    if (allowed.length === 0) return false;
    const result = await this.store.db
      .updateTable('experiments')
      .set({ ...change, promoted_arm: arm, promoted_by: by, promoted_at: now, updated_at: now })
      .where('id', '=', id)
      .where('promoted_arm', 'is', null)
      .where('status', 'in', allowed)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Deletes what was recorded for an experiment (its row already gone): exposures written late by another replica. */
  async removeData(id: string): Promise<void> {
    if (await this.get(id)) return;
    await this.store.db.deleteFrom('experiment_feedback').where('experiment_id', '=', id).execute();
    await this.store.db.deleteFrom('experiment_exposures').where('experiment_id', '=', id).execute();
  }

  /** Deletes the experiment with its exposures and feedback; false when it was not there or running. */
  async remove(id: string): Promise<boolean> {
    return this.store.db.transaction().execute(async (tx) => {
      const result = await tx.deleteFrom('experiments').where('id', '=', id).where('status', '!=', 'running').executeTakeFirst();
      if (Number(result.numDeletedRows) !== 1) return false;
      await tx.deleteFrom('experiment_feedback').where('experiment_id', '=', id).execute();
      await tx.deleteFrom('experiment_exposures').where('experiment_id', '=', id).execute();
      return true;
    });
  }
}
