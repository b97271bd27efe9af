// What an operator does with experiments, whichever replica they ask: create, change a draft,
// start, stop, promote, delete; and what the request path follows (the live list, refreshed from
// the database every few seconds and at once after a change here). Every state change is
// conditional on the state it leaves (experiment-store.ts), and only the replica whose change
// took effect sends `experiment.finished`. The finisher (finish()) ends experiments at their end
// date, or at their decision when early stop is on.
import type { Logger } from 'pino';
import { GatewayError } from '../../core/errors.js';
import type { Store } from '../../core/store/database.js';
import type { Notification } from '../../core/events.js';
import { definitionOf, type Defaults, type Definition, type DefinitionInput, type Status } from './definition.js';
import { Experiments, newExperimentId, type Experiment, type ExperimentChange } from './experiment-store.js';
import { liveExperiment, type LiveExperiment, type ModelName } from './assign.js';
import { readArms, type ArmData } from './results.js';
import { decide, type Judged } from './decision.js';

const DAY_MS = 86_400_000;
/** Experiments kept (any status): each is a row and its data; delete finished ones to make room. */
export const MAX_EXPERIMENTS = 1000;
/** Running at once: each is checked on every matching request. */
export const MAX_RUNNING = 20;

export type FinishReason = 'duration' | 'decision' | 'stopped' | 'promoted';

export interface LabOptions {
  store: Store;
  logger: Logger;
  defaults: Defaults;
  /** MODELGATE_AB_TESTING_ENABLED: experiments may run. */
  enabled: boolean;
  /** The catalog entries a model name means; empty when none. */
  resolveModel(name: string): readonly ModelName[];
  notify(notification: Notification): void;
  now?: () => number;
}

export class Lab {
  readonly experiments: Experiments;
  /** Running experiments first, then promoted ones, each oldest first. */
  private liveList: LiveExperiment[] = [];
  private readonly now: () => number;

  constructor(private readonly options: LabOptions) {
    this.experiments = new Experiments(options.store);
    this.now = options.now ?? Date.now;
  }

  get live(): readonly LiveExperiment[] {
    return this.liveList;
  }

  /** Reads what runs and what was promoted from the database. */
  async refresh(): Promise<void> {
    const rows = await this.experiments.live();
    const running = rows.filter((e) => e.status === 'running' && this.options.enabled);
    const promoted = rows.filter((e) => e.promotedArm !== null);
    this.liveList = [
      ...running.map((e) => liveExperiment(e.id, e.name, e.definition, this.options.resolveModel)),
      ...promoted.map((e) => liveExperiment(e.id, e.name, e.definition, this.options.resolveModel, e.promotedArm!)),
    ];
  }

  async create(input: DefinitionInput, by: string): Promise<Experiment> {
    const definition = this.checked(definitionOf(input, this.options.defaults));
    if (await this.experiments.byName(input.name!)) throw nameTaken();
    if ((await this.experiments.count()) >= MAX_EXPERIMENTS) {
      throw new GatewayError('conflict', { code: 'too_many_experiments', message: `The gateway keeps ${MAX_EXPERIMENTS} experiments, the most it takes: delete finished ones first` });
    }
    const start = input.status !== 'draft';
    if (start) await this.mayStart();
    const now = this.now();
    const row = {
      id: newExperimentId(),
      name: input.name!,
      status: start ? 'running' : 'draft',
      definition: JSON.stringify(definition),
      created_by: by,
      created_at: now,
      updated_at: now,
      started_at: start ? now : null,
      ends_at: start ? now + definition.duration_days * DAY_MS : null,
      finished_at: null,
      finish_reason: null,
      winner: null,
      promoted_arm: null,
      promoted_by: null,
      promoted_at: null,
    };
    let created: Experiment;
    try {
      created = await this.experiments.create(row);
    } catch (error) {
      // Two creates of one name racing: the database's unique index refuses the second.
      if (await this.experiments.byName(row.name)) throw nameTaken();
      throw error;
    }
    await this.refresh();
    return created;
  }

  /** A draft may change in every field and be started; a running experiment only in its description, early stop and duration. */
  async change(current: Experiment, input: DefinitionInput): Promise<Experiment> {
    const now = this.now();
    if (current.status === 'draft') {
      const definition = this.checked(definitionOf(input, this.options.defaults, current.definition));
      if (input.name !== undefined && input.name !== current.name && (await this.experiments.byName(input.name))) throw nameTaken();
      const start = input.status === 'running';
      if (start) await this.mayStart();
      const change: ExperimentChange = { definition: JSON.stringify(definition), name: input.name ?? current.name };
      if (start) Object.assign(change, { status: 'running', started_at: now, ends_at: now + definition.duration_days * DAY_MS });
      return this.applied(current, ['draft'], change, now);
    }
    if (current.status !== 'running') throw new GatewayError('conflict', { code: 'experiment_ended', message: `This experiment is ${current.status}: it can no longer change` });
    const frozen = Object.keys(input).find((field) => !['description', 'early_stop', 'duration_days', 'status'].includes(field));
    if (frozen) throw new GatewayError('conflict', { param: frozen, code: 'experiment_running', message: `A running experiment's ${frozen} cannot change (units would move between arms): stop it and create another` });
    if (input.status === 'draft') throw new GatewayError('conflict', { param: 'status', code: 'experiment_running', message: 'A running experiment cannot go back to draft: stop it instead' });
    const definition = definitionOf(input, this.options.defaults, current.definition);
    const change: ExperimentChange = { definition: JSON.stringify(definition) };
    if (input.duration_days !== undefined) change.ends_at = current.startedAt! + definition.duration_days * DAY_MS;
    return this.applied(current, ['running'], change, now);
  }

  async stop(current: Experiment): Promise<Experiment> {
    if (current.status !== 'running') throw new GatewayError('conflict', { code: 'experiment_not_running', message: `This experiment is ${current.status}, not running` });
    const judged = await this.judge(current);
    const stopped = await this.finishAs(current, 'stopped', judged.decision.winner);
    if (!stopped) throw new GatewayError('conflict', { code: 'experiment_not_running', message: 'This experiment ended meanwhile' });
    return stopped;
  }

  /** Makes `armName` (or the decision's winner) where matching requests go from now on, for good. */
  async promote(current: Experiment, armName: string | undefined, by: string): Promise<Experiment> {
    if (current.status === 'draft') throw new GatewayError('conflict', { code: 'experiment_not_started', message: 'A draft has no results to promote: start it first' });
    if (current.promotedArm !== null) {
      throw new GatewayError('conflict', { code: 'already_promoted', message: `${current.promotedArm} was promoted already; delete the experiment to route as before, or start another` });
    }
    let arm = armName;
    if (arm === undefined) {
      arm = current.status === 'running' ? ((await this.judge(current)).decision.winner ?? undefined) : (current.winner ?? undefined);
      if (arm === undefined) throw new GatewayError('conflict', { code: 'no_winner', message: 'The results name no winner yet: name the arm to promote (`arm`) to promote one anyway' });
    }
    if (!current.definition.arms.some((a) => a.name === arm)) throw new GatewayError('bad_request', { param: 'arm', message: 'arm names no arm of this experiment' });
    const now = this.now();
    const running = current.status === 'running';
    const change: ExperimentChange = running ? { status: 'finished', finished_at: now, finish_reason: 'promoted', winner: arm } : {};
    if (!(await this.experiments.promote(current.id, arm, by, now, change))) {
      throw new GatewayError('conflict', { code: 'already_promoted', message: 'This experiment was promoted meanwhile' });
    }
    // Promoting a finished experiment does not finish it again: its event went out when it ended.
    if (running) this.announce(current, 'promoted', arm);
    await this.refresh();
    return (await this.experiments.get(current.id))!;
  }

  async remove(current: Experiment): Promise<void> {
    if (current.status === 'running') throw new GatewayError('conflict', { code: 'experiment_running', message: 'Stop the experiment before deleting it' });
    if (!(await this.experiments.remove(current.id))) throw new GatewayError('conflict', { code: 'experiment_running', message: 'The experiment started meanwhile' });
    await this.refresh();
  }

  async judge(experiment: Experiment): Promise<Judged & { arms: ArmData[] }> {
    const arms = await readArms(this.options.store, experiment.id, experiment.definition);
    return { ...decide(experiment.definition, arms), arms };
  }

  /**
   * Ends running experiments whose end date passed, and with `decisions` (early stop) those whose
   * decision names a winner. Run by one replica at a time (a lease); a second one would only repeat
   * the reads, since every ending is conditional.
   */
  async finish(options: { decisions: boolean }): Promise<void> {
    const now = this.now();
    for (const live of this.liveList) {
      if (live.promotedArm) continue;
      // One experiment whose results cannot be read does not keep the others from ending.
      try {
        const current = await this.experiments.get(live.id);
        if (current?.status !== 'running') continue;
        if (current.endsAt !== null && current.endsAt <= now) {
          // Its end date is kept even when its results cannot be read: it ends without a winner.
          const winner = await this.judge(current).then(
            (judged) => judged.decision.winner,
            (error: Error) => (this.options.logger.warn({ experimentId: current.id, err: error.message }, 'experiments: results unreadable at the end date'), null),
          );
          await this.finishAs(current, 'duration', winner);
        } else if (options.decisions && current.definition.early_stop) {
          const judged = await this.judge(current);
          if (judged.decision.winner !== null) await this.finishAs(current, 'decision', judged.decision.winner);
        }
      } catch (error) {
        this.options.logger.warn({ experimentId: live.id, err: (error as Error).message }, 'experiments: could not check whether the experiment is due to end');
      }
    }
  }

  private async finishAs(current: Experiment, reason: FinishReason, winner: string | null): Promise<Experiment | undefined> {
    const now = this.now();
    const status: Status = reason === 'stopped' ? 'stopped' : 'finished';
    const done = await this.experiments.change(current.id, ['running'], { status, finished_at: now, finish_reason: reason, winner }, now);
    if (!done) return undefined;
    this.options.logger.info({ experimentId: current.id, reason, winner }, 'experiments: experiment ended');
    this.announce(current, reason, winner);
    await this.refresh();
    return done;
  }

  private announce(experiment: Experiment, reason: FinishReason, winner: string | null): void {
    this.options.notify({ type: 'experiment.finished', data: { experiment_id: experiment.id, name: experiment.name, reason, winner } });
  }

  private async applied(current: Experiment, from: Status[], change: ExperimentChange, now: number): Promise<Experiment> {
    const done = await this.experiments.change(current.id, from, change, now);
    if (!done) throw new GatewayError('conflict', { code: 'experiment_changed', message: 'The experiment changed meanwhile: read it again' });
    await this.refresh();
    return done;
  }

  private async mayStart(): Promise<void> {
    if (!this.options.enabled) {
      throw new GatewayError('conflict', { code: 'ab_testing_disabled', message: 'A/B testing is off (MODELGATE_AB_TESTING_ENABLED=false): experiments can be drafted but not started' });
    }
    if ((await this.experiments.count('running')) >= MAX_RUNNING) {
      throw new GatewayError('conflict', { code: 'too_many_experiments', message: `${MAX_RUNNING} experiments are running, the most at once: stop one first` });
    }
  }

  /** Every arm's model must be one the gateway can route to. */
  private checked(definition: Definition): Definition {
    definition.arms.forEach((arm, i) => {
      if (arm.model !== undefined && this.options.resolveModel(arm.model).length === 0) {
        throw new GatewayError('bad_request', { param: `arms.${i}.model`, message: `arms.${i}.model names no model the gateway knows (GET /v1/models lists them)` });
      }
    });
    return definition;
  }
}

function nameTaken(): GatewayError {
  return new GatewayError('conflict', { param: 'name', code: 'experiment_exists', message: 'An experiment has this name already' });
}
