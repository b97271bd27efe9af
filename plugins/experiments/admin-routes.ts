// The admin API of experiments (admin keys only; anything else is refused 403 admin_required):
//   POST   /v1/admin/experiments               create (running unless `status: "draft"`); 201
//   GET    /v1/admin/experiments               list: limit, after (cursor), status
//   GET    /v1/admin/experiments/{id}          one experiment with its results and decision
//   PATCH  /v1/admin/experiments/{id}          change a draft (or start it: status running); a running one: description, early_stop, duration_days
//   POST   /v1/admin/experiments/{id}/stop     stop a running experiment (experiment.finished, reason stopped)
//   POST   /v1/admin/experiments/{id}/promote  route its matching traffic to an arm from now on ({"arm"}; default: the winner)
//   DELETE /v1/admin/experiments/{id}          delete a stopped, finished or draft experiment with its data (and its promotion)
import { Ajv } from 'ajv';
import { readRequestBody } from '../../core/body.js';
import { GatewayError } from '../../core/errors.js';
import { sendJson } from '../../core/respond.js';
import type { RequestContext } from '../../core/context.js';
import { storeGuarded } from '../../core/store-guard.js';
import type { Route } from '../../core/pipeline.js';
import { adminOnly, NO_STORE, pageLimit, queryParam, validatedBody } from '../../core/admin-api.js';
import { lazyValidator } from '../../core/lazy-validator.js';
import { parseChange, parseCreate, STATUSES, type Status } from './definition.js';
import { EXPERIMENT_ID, type Experiment } from './experiment-store.js';
import type { Lab } from './lab.js';
import { apiExperiment, apiResults } from './api-shape.js';

const BODY_LIMIT = 32 * 1024;

const validatePromote = lazyValidator(() =>
  new Ajv({ strict: true }).compile<{ arm?: string }>({
    type: 'object',
    additionalProperties: false,
    properties: { arm: { type: 'string', minLength: 1, maxLength: 64 } },
  }),
);

export interface ExperimentAdminDeps {
  lab: Lab;
  /** MODELGATE_BODY_IDLE_TIMEOUT. */
  bodyIdleMs: number;
}

export function experimentAdminRoutes(deps: ExperimentAdminDeps): Route[] {
  const body = (ctx: RequestContext) => readRequestBody(ctx.req, { maxBytes: BODY_LIMIT, idleMs: deps.bodyIdleMs });
  return routes(deps.lab, body).map((route) => storeGuarded(route, 'experiments'));
}

function routes(lab: Lab, body: (ctx: RequestContext) => Promise<Buffer>): Route[] {
  /** The path's experiment; an id of another shape names none: no database lookup for it. */
  const found = async (ctx: RequestContext): Promise<Experiment> => {
    const id = ctx.params.id!;
    const experiment = EXPERIMENT_ID.test(id) ? await lab.experiments.get(id) : undefined;
    if (!experiment) throw new GatewayError('experiment_not_found', { param: 'id' });
    return experiment;
  };
  const withResults = async (experiment: Experiment) => {
    const judged = await lab.judge(experiment);
    return { ...apiExperiment(experiment), results: apiResults(experiment, judged) };
  };
  const by = (ctx: RequestContext) => ctx.principal!.keyId;

  return [
    {
      method: 'POST',
      path: '/v1/admin/experiments',
      async handle(ctx) {
        adminOnly(ctx);
        const experiment = await lab.create(parseCreate(await body(ctx)), by(ctx));
        ctx.log.info({ experimentId: experiment.id, status: experiment.status, by: by(ctx) }, 'experiments: experiment created');
        sendJson(ctx, 201, apiExperiment(experiment), NO_STORE);
      },
    },
    {
      method: 'GET',
      path: '/v1/admin/experiments',
      async handle(ctx) {
        adminOnly(ctx);
        const limit = pageLimit(ctx);
        const status = queryParam(ctx, 'status', new RegExp(`^(${STATUSES.join('|')})$`)) as Status | undefined;
        const afterId = queryParam(ctx, 'after', EXPERIMENT_ID);
        const after = afterId === undefined ? undefined : await lab.experiments.get(afterId);
        if (afterId !== undefined && !after) throw new GatewayError('bad_request', { param: 'after', message: 'after names no experiment (deleted, or never one)' });
        const rows = await lab.experiments.page(limit + 1, after, status);
        const data = rows.slice(0, limit).map(apiExperiment);
        sendJson(ctx, 200, { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > limit }, NO_STORE);
      },
    },
    {
      method: 'GET',
      path: '/v1/admin/experiments/{id}',
      async handle(ctx) {
        adminOnly(ctx);
        sendJson(ctx, 200, await withResults(await found(ctx)), NO_STORE);
      },
    },
    {
      method: 'PATCH',
      path: '/v1/admin/experiments/{id}',
      async handle(ctx) {
        adminOnly(ctx);
        const current = await found(ctx);
        const input = parseChange(await body(ctx));
        const changed = await lab.change(current, input);
        ctx.log.info({ experimentId: current.id, by: by(ctx), fields: Object.keys(input) }, 'experiments: experiment changed');
        sendJson(ctx, 200, apiExperiment(changed), NO_STORE);
      },
    },
    {
      method: 'POST',
      path: '/v1/admin/experiments/{id}/stop',
      async handle(ctx) {
        adminOnly(ctx);
        const stopped = await lab.stop(await found(ctx));
        ctx.log.info({ experimentId: stopped.id, by: by(ctx) }, 'experiments: experiment stopped');
        sendJson(ctx, 200, await withResults(stopped), NO_STORE);
      },
    },
    {
      method: 'POST',
      path: '/v1/admin/experiments/{id}/promote',
      async handle(ctx) {
        adminOnly(ctx);
        const current = await found(ctx);
        const input = validatedBody(await body(ctx), validatePromote);
        const promoted = await lab.promote(current, input.arm, by(ctx));
        ctx.log.info({ experimentId: promoted.id, arm: promoted.promotedArm, by: by(ctx) }, 'experiments: arm promoted');
        sendJson(ctx, 200, await withResults(promoted), NO_STORE);
      },
    },
    {
      method: 'DELETE',
      path: '/v1/admin/experiments/{id}',
      async handle(ctx) {
        adminOnly(ctx);
        const current = await found(ctx);
        await lab.remove(current);
        ctx.log.info({ experimentId: current.id, by: by(ctx) }, 'experiments: experiment deleted');
        sendJson(ctx, 200, { id: current.id, object: 'experiment', deleted: true }, NO_STORE);
      },
    },
  ];
}
