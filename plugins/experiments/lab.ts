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
/** Results are read again after this: a page polled every second aggregates once per interval. */
const RESULTS_TTL_MS = 5000;
/** Exposures another replica had queued when an experiment was deleted are written within this. */
const LATE_WRITES_MS = 10_000;

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
  /** Writes this replica's queued exposures, so results read here include its own latest requests (best effort). */
  writePending?(): Promise<void>;
  now?: () => number;
}

export class Lab {
  readonly experiments: Experiments;
  /** Running experiments first, then promoted ones, each oldest first. */
  private liveList: LiveExperiment[] = [];
  /** Running in the database (whether or not this replica assigns to them: A/B testing may be off). */
  private runningCount = 0;
  /** Results read lately, per experiment: a dashboard polling, or the finisher, does not re-aggregate every time. */
  private readonly recent = new Map<string, { at: number; judged: Promise<Judged & { arms: ArmData[] }> }>();
  private readonly now: () => number;

  constructor(private readonly options: LabOptions) {
    this.experiments = new Experiments(options.store);
    this.now = options.now ?? Date.now;
  }

  get live(): readonly LiveExperiment[] {
    return this.liveList;
  }

  /** Something may be due to end: an experiment runs (in the database, as of the last refresh). */
  get anyRunning(): boolean {
    return this.runningCount > 0;
  }

  /** Reads what runs and what was promoted from the database. */
  async refresh(): Promise<void> {
    const rows = await this.experiments.live();
    this.runningCount = rows.filter((e) => e.status === 'running').length;
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
    // Stopped first, its winner read after: results that cannot be read (a huge experiment, a
    // database in trouble) never keep an experiment taking traffic.
    const stopped = await this.finishAs(current, 'stopped');
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
    // A running experiment finishes with the promotion — only if it is still running: stopped or
    // ended meanwhile, it keeps its state and its event (sent when it ended), and only the promotion is added.
    let running = current.status === 'running';
    let promoted = await this.experiments.promote(current.id, arm, by, now, running ? { status: 'finished', finished_at: now, finish_reason: 'promoted', winner: arm } : {}, [current.status]);
    if (!promoted && running) {
      const latest = await this.experiments.get(current.id);
      if (latest && latest.status !== 'running' && latest.status !== 'draft' && latest.promotedArm === null) {
        running = false;
        promoted = await this.experiments.promote(current.id, arm, by, now, {}, [latest.status]);
      }
    }
    if (!promoted) throw new GatewayError('conflict', { code: 'already_promoted', message: 'This experiment was promoted meanwhile' });
    if (running) this.announce(current, 'promoted', arm);
    await this.refresh();
    return (await this.experiments.get(current.id))!;
  }

  /** New data arrived (feedback here): the next read aggregates again. */
  forget(experimentId: string): void {
    this.recent.delete(experimentId);
  }

  async remove(current: Experiment): Promise<void> {
    if (current.status === 'running') throw new GatewayError('conflict', { code: 'experiment_running', message: 'Stop the experiment before deleting it' });
    if (!(await this.experiments.remove(current.id))) throw new GatewayError('conflict', { code: 'experiment_running', message: 'The experiment started meanwhile' });
    this.recent.delete(current.id);
    await this.refresh();
    // Other replicas may still write exposures they had queued (they flush every second): removed again a little later.
    setTimeout(() => {
      this.experiments.removeData(current.id).catch((error: Error) => this.options.logger.warn({ experimentId: current.id, err: error.message }, 'experiments: late exposures of a deleted experiment were not removed'));
    }, LATE_WRITES_MS).unref();
  }

  /** The experiment's results and decision, read at most once per RESULTS_TTL_MS. */
  judge(experiment: Experiment): Promise<Judged & { arms: ArmData[] }> {
    const now = this.now();
    const cached = this.recent.get(experiment.id);
    if (cached && now - cached.at < RESULTS_TTL_MS) return cached.judged;
    if (this.recent.size >= MAX_EXPERIMENTS) this.recent.clear();
    const pending = this.options.writePending?.().catch(() => undefined) ?? Promise.resolve();
    const judged = pending.then(() => readArms(this.options.store, experiment.id, experiment.definition)).then((arms) => ({ ...decide(experiment.definition, arms), arms }));
    this.recent.set(experiment.id, { at: now, judged });
    judged.catch(() => this.recent.delete(experiment.id));
    return judged;
  }

  /**
   * Ends running experiments whose end date passed, and with `decisions` (early stop) those whose
   * decision names a winner. Run by one replica at a time (a lease); a second one would only repeat
   * the reads, since every ending is conditional.
   */
  async finish(options: { decisions: boolean }): Promise<void> {
    const now = this.now();
    // From the database, not the live list: with A/B testing off nothing is assigned, but end dates still apply.
    const running = (await this.experiments.live()).filter((e) => e.status === 'running');
    for (const current of running) {
      // One experiment whose results cannot be read does not keep the others from ending.
      try {
        if (current.endsAt !== null && current.endsAt <= now) {
          await this.finishAs(current, 'duration');
        } else if (options.decisions && current.definition.early_stop) {
          const judged = await this.judge(current);
          if (judged.decision.winner !== null) await this.finishAs(current, 'decision', judged.decision.winner);
        }
      } catch (error) {
        this.options.logger.warn({ experimentId: current.id, err: (error as Error).message }, 'experiments: could not check whether the experiment is due to end');
      }
    }
  }

  /**
   * Ends a running experiment (only if it still runs: the replica whose change took effect
   * announces it). Without `winner` the decision's winner is read after the state changed, at
   * best: results that cannot be read end it without one.
   */
  private async finishAs(current: Experiment, reason: FinishReason, winner?: string | null): Promise<Experiment | undefined> {
    const now = this.now();
    const status: Status = reason === 'stopped' ? 'stopped' : 'finished';
    let done = await this.experiments.change(current.id, ['running'], { status, finished_at: now, finish_reason: reason, winner: winner ?? null }, now);
    if (!done) return undefined;
    await this.refresh();
    if (winner === undefined) {
      this.recent.delete(current.id);
      const named = await this.judge(done).then(
        (judged) => judged.decision.winner,
        (error: Error) => (this.options.logger.warn({ experimentId: current.id, err: error.message }, 'experiments: results unreadable as the experiment ended: it ends without a winner'), null),
      );
      if (named !== null) done = (await this.experiments.change(current.id, [status], { winner: named }, now)) ?? done;
      winner = named;
    }
    this.options.logger.info({ experimentId: current.id, reason, winner }, 'experiments: experiment ended');
    this.announce(current, reason, winner);
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
