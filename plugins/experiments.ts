// A/B experiments (docs/experiments.md): a step right after the body is read puts a request that
// matches a running experiment into an arm — a deterministic hash of the experiment and the unit —
// and sends it there (the arm's model, its routing strategy); every later step (limits, budgets,
// cache, routing, failover) then treats it as any other request. The answer carries
// `x-modelgate-experiment: <experiment>/<arm>`; after the response an exposure row is queued and
// written in a batch. With nothing running or promoted the step costs one array length check.
// Also here: the admin API of experiments, POST /v1/feedback, and the check that ends experiments.
// Reads MODELGATE_AB_TESTING_*.
import { defineSettings, type SettingsOf } from '../core/settings.js';
import { releaseLease, takeLease } from '../core/store/lease.js';
import type { PluginModule } from '../core/pipeline.js';
import type { RequestContext } from '../core/context.js';
import { modelsNamed } from '../core/model-names.js';
import { Lab } from './experiments/lab.js';
import { applyArm, armFor, draw, matches, unitOf } from './experiments/assign.js';
import { ExposureWriter } from './experiments/exposures.js';
import { exposureRow } from './experiments/exposure-row.js';
import { experimentAdminRoutes } from './experiments/admin-routes.js';
import { feedbackRoute } from './experiments/feedback.js';

const settings = defineSettings({
  MODELGATE_AB_TESTING_ENABLED: {
    type: 'boolean',
    default: false,
    description: 'Run A/B experiments defined at /v1/admin/experiments. Off: they can be drafted and read, not started, and none assigns requests (a promoted arm still routes).',
  },
  MODELGATE_AB_TESTING_DURATION: { type: 'integer', default: 7, minimum: 1, maximum: 365, description: 'Days an experiment runs when it does not say (`duration_days`).' },
  MODELGATE_AB_TESTING_METRICS: {
    type: 'array',
    default: [],
    items: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,63}$' },
    description: 'Metrics an experiment compares when it does not say: `cost` (measured), `quality_score` (0..1) and `user_satisfaction` (1–5) from POST /v1/feedback, or any other feedback metric name. Empty: `cost`.',
  },
  MODELGATE_AB_TESTING_EARLY_STOP: {
    type: 'boolean',
    default: false,
    description: 'Finish an experiment as soon as its decision names a winner (the test stays valid however often it is looked at), not only at its end date. An experiment may say otherwise (`early_stop`).',
  },
  MODELGATE_AB_TESTING_CHECK_INTERVAL: {
    type: 'integer',
    default: 5,
    minimum: 1,
    maximum: 3600,
    description: 'Seconds between two reads of the running experiments by each replica (a change made on another replica applies within this) and two checks of end dates; early-stop decisions are checked every sixth time.',
  },
});

export type ExperimentSettings = SettingsOf<typeof settings>;

/** Exposures go to the database about this often. */
const FLUSH_MS = 1000;
const FINISHER_LEASE = 'experiments-finisher';
/** Early-stop decisions are looked at every this many check intervals (30 s by default). */
const DECISION_TICKS = 6;

export const experiments: PluginModule<typeof settings> = {
  name: 'experiments',
  settings,
  async create(values, deps) {
    const s = values as ExperimentSettings;
    const { catalog, providers, logger } = deps;
    const store = deps.store();

    /** What the router would route a name to (core/model-names.ts). */
    const resolveModel = (name: string) => modelsNamed(name, catalog, providers);

    const exposures = new ExposureWriter(store, logger, FLUSH_MS);
    const lab = new Lab({
      store,
      logger,
      enabled: s.MODELGATE_AB_TESTING_ENABLED,
      defaults: { metrics: s.MODELGATE_AB_TESTING_METRICS, durationDays: s.MODELGATE_AB_TESTING_DURATION, earlyStop: s.MODELGATE_AB_TESTING_EARLY_STOP },
      resolveModel,
      notify: (notification) => deps.events.emit('notify', notification),
      writePending: () => exposures.flush(),
    });
    await lab.refresh();

    // Every tick each replica re-reads what runs; one replica at a time (a lease) ends what is due.
    // End dates are checked every tick (a comparison); early-stop decisions, which aggregate the
    // experiment's data, every DECISION_TICKS ticks.
    const intervalMs = s.MODELGATE_AB_TESTING_CHECK_INTERVAL * 1000;
    let checking: Promise<void> | undefined;
    let ticks = 0;
    const tick = async () => {
      await lab.refresh();
      // End dates apply with A/B testing off too (nothing is assigned then, but the experiment ends).
      if (!lab.anyRunning) return;
      if (!(await takeLease(store, FINISHER_LEASE, intervalMs * 3))) return;
      await lab.finish({ decisions: ticks++ % DECISION_TICKS === 0 });
    };
    const timer = setInterval(() => {
      if (checking) return;
      checking = tick()
        .catch((error: Error) => logger.warn({ err: error.message }, 'experiments: could not read or finish experiments; the last list stays in force'))
        .finally(() => (checking = undefined));
    }, intervalMs);
    timer.unref();

    const pseudonym = (value: string) => deps.anonymizer.pseudonym(value);
    function assign(ctx: RequestContext): void {
      for (const experiment of lab.live) {
        if (!matches(experiment, ctx)) continue;
        if (experiment.promotedArm) {
          applyArm(ctx, experiment.promotedArm);
          return;
        }
        const unit = unitOf(experiment, ctx, pseudonym);
        if (unit === undefined) continue;
        const percent = experiment.definition.match.percent;
        if (percent < 100 && draw(experiment.id, 'enter', unit) * 100 >= percent) continue;
        const arm = armFor(experiment, unit);
        applyArm(ctx, arm);
        ctx.experiment = { experimentId: experiment.id, experimentName: experiment.name, arm: arm.name, unit };
        ctx.responseHeaders['x-modelgate-experiment'] = `${experiment.name}/${arm.name}`;
        return;
      }
    }

    return {
      name: 'experiments',
      step: {
        name: 'experiments',
        scope: 'chat',
        handle(ctx, next) {
          // Vectors of different models are not comparable: embeddings never enter an experiment.
          if (lab.live.length > 0 && ctx.chat && ctx.chat.api !== 'embeddings') assign(ctx);
          return next();
        },
      },
      routes: [
        ...experimentAdminRoutes({ lab, bodyIdleMs: values.MODELGATE_BODY_IDLE_TIMEOUT as number }),
        feedbackRoute({ store, experiments: lab.experiments, exposures, recorded: (id) => lab.forget(id), bodyIdleMs: values.MODELGATE_BODY_IDLE_TIMEOUT as number }),
      ],
      observe(ctx) {
        if (ctx.experiment) exposures.add(exposureRow(ctx, deps.anonymizer));
      },
      async close() {
        clearInterval(timer);
        await checking;
        await releaseLease(store, FINISHER_LEASE).catch(() => undefined);
        await exposures.close();
      },
    };
  },
};
