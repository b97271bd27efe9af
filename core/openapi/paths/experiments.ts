// A/B experiments (plugins/experiments/): the admin API of experiments (admin keys only), and
// POST /v1/feedback, where any key rates an answer it received.
import { headers, RATE_LIMIT_HEADERS } from '../headers.js';
import { keyedErrors, keyedRefusal } from '../responses.js';
import type { Operation, Parameter, PathItem, Response } from '../types.js';

const json = (schema: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } });
const answer = (description: string, schema: string): Response => ({ description, headers: headers(...RATE_LIMIT_HEADERS, 'cache-control'), content: json(schema) });
const id: Parameter = { name: 'id', in: 'path', required: true, description: 'The experiment id (`exp_…`).', schema: { type: 'string' } };
const requestId = { $ref: '#/components/parameters/RequestId' };
const query = (name: string, description: string, schema: Record<string, unknown>): Parameter => ({ name, in: 'query', description, schema });

const storeDown = keyedRefusal('The database does not answer (code store_unavailable), or the rate-limit store with MODELGATE_RATE_LIMIT_REDIS_FAILURE=refuse.', 'retry-after');
const forbidden = keyedRefusal('The key is not an admin key (code admin_required), or the IP filter refuses this client (code ip_not_allowed).');
const notFound = keyedRefusal('No experiment has this id (code experiment_not_found, `param` id).');
const badBody = (more = '') =>
  keyedRefusal(
    `The body is not JSON (code invalid_json) or breaks the schema (code invalid_request; \`param\` names the field, e.g. \`arms.1.model\`); or the definition breaks a rule the schema cannot say (code invalid_request, \`param\` names the field): an arm's model the gateway does not know, two arms of one name, an arm with neither model nor strategy, no arm (or the control) weighted above 0, a \`unit\` other than user, key or header:<name>, \`latency\` or \`error_rate\` in \`metrics\`, a \`primary_metric\` not among the metrics, a repeated guardrail.${more}`,
  );
const tooLarge = keyedRefusal('The body is larger than 32 KB (code request_too_large).');
const adminErrors = (own: Record<string, Response>) => keyedErrors({ '403': forbidden, '503': storeDown, ...own });

const STARTING = 'A/B testing is off (code ab_testing_disabled: MODELGATE_AB_TESTING_ENABLED=false), or 20 experiments run already (code too_many_experiments)';

const operation = (op: Omit<Operation, 'tags'>): Operation => ({ ...op, tags: ['Experiments'] });

export const experimentPaths: Record<string, PathItem> = {
  '/v1/admin/experiments': {
    post: operation({
      operationId: 'createExperiment',
      summary: 'Create an experiment',
      description:
        'Defines an A/B experiment: which chat requests enter (`match`), the unit assigned to an arm, the arms (the first is the control), the metrics, the primary metric and the guardrails. It starts at once unless `status: "draft"`. At most 1000 experiments are kept and 20 run at once. Admin keys only.',
      parameters: [requestId],
      requestBody: { description: 'The new experiment.', required: true, content: json('ExperimentCreate') },
      responses: {
        '201': answer('The experiment.', 'Experiment'),
        ...adminErrors({
          '400': badBody(),
          '409': keyedRefusal(`An experiment has this name already (code experiment_exists, \`param\` name); the gateway keeps 1000 experiments already (code too_many_experiments); or, to start it: ${STARTING}.`),
          '413': tooLarge,
        }),
      },
    }),
    get: operation({
      operationId: 'listExperiments',
      summary: 'List experiments',
      description: 'Experiments, newest first, without their results, a page at a time: pass the last id of a page as `after` for the next. Admin keys only.',
      parameters: [
        query('limit', 'Experiments per page, 1 to 100 (default 20).', { type: 'integer', minimum: 1, maximum: 100 }),
        query('after', 'The `last_id` of the previous page.', { type: 'string', pattern: '^exp_[0-9a-f]{24}$' }),
        query('status', 'Only experiments in this state.', { type: 'string', enum: ['draft', 'running', 'stopped', 'finished'] }),
        requestId,
      ],
      responses: {
        '200': answer('A page of experiments.', 'ExperimentList'),
        ...adminErrors({ '400': keyedRefusal('A query parameter is not valid, or `after` names no experiment (code invalid_request, `param` names it).') }),
      },
    }),
  },
  '/v1/admin/experiments/{id}': {
    get: operation({
      operationId: 'getExperiment',
      summary: 'One experiment with its results',
      description: 'An experiment with `results`: per arm what it measured, with 95% intervals and the comparison with the control, and the decision — computed when asked. Admin keys only.',
      parameters: [id, requestId],
      responses: { '200': answer('The experiment and its results.', 'ExperimentWithResults'), ...adminErrors({ '404': notFound }) },
    }),
    patch: operation({
      operationId: 'updateExperiment',
      summary: 'Change or start an experiment',
      description:
        "Changes a draft in any field, and `status: \"running\"` starts it. A running experiment may change only its `description`, `early_stop` and `duration_days` (its end moves with it): anything else would move units between arms. A stopped or finished experiment no longer changes. Admin keys only.",
      parameters: [id, requestId],
      requestBody: { description: 'The fields to change.', required: true, content: json('ExperimentChange') },
      responses: {
        '200': answer('The experiment as changed.', 'Experiment'),
        ...adminErrors({
          '400': badBody(),
          '404': notFound,
          '409': keyedRefusal(
            `A running experiment's other field, or \`status: "draft"\` (code experiment_running, \`param\` names the field); a stopped or finished experiment (code experiment_ended); a new name another experiment has (code experiment_exists); it changed meanwhile (code experiment_changed: read it again); or, to start a draft: ${STARTING}.`,
          ),
          '413': tooLarge,
        }),
      },
    }),
    delete: operation({
      operationId: 'deleteExperiment',
      summary: 'Delete an experiment',
      description: 'Removes a draft, stopped or finished experiment with its data (assignments and feedback) and its promotion: its traffic routes as before. Admin keys only.',
      parameters: [id, requestId],
      responses: {
        '200': answer('The experiment is gone.', 'DeletedExperiment'),
        ...adminErrors({ '404': notFound, '409': keyedRefusal('The experiment is running (code experiment_running): stop it first.') }),
      },
    }),
  },
  '/v1/admin/experiments/{id}/stop': {
    post: operation({
      operationId: 'stopExperiment',
      summary: 'Stop an experiment',
      description: 'Ends a running experiment now (status `stopped`, `experiment.finished` with reason `stopped`): no request enters it any more. Its results stay, and an arm may still be promoted. Admin keys only.',
      parameters: [id, requestId],
      responses: {
        '200': answer('The experiment as stopped, with its results.', 'ExperimentWithResults'),
        ...adminErrors({ '404': notFound, '409': keyedRefusal('The experiment is not running (code experiment_not_running).') }),
      },
    }),
  },
  '/v1/admin/experiments/{id}/promote': {
    post: operation({
      operationId: 'promoteExperimentArm',
      summary: 'Promote an arm',
      description:
        "Sends the experiment's matching traffic to an arm (`arm`, or the decision's winner) from now on, on every replica, until the experiment is deleted. A running experiment finishes (reason `promoted`). Admin keys only.",
      parameters: [id, requestId],
      requestBody: { description: 'The arm; an empty body promotes the winner.', required: false, content: json('ExperimentPromote') },
      responses: {
        '200': answer('The experiment as promoted, with its results.', 'ExperimentWithResults'),
        ...adminErrors({
          '400': keyedRefusal('The body is not JSON (code invalid_json) or breaks the schema, or `arm` names no arm of the experiment (code invalid_request, `param` arm).'),
          '404': notFound,
          '409': keyedRefusal(
            'The experiment is a draft (code experiment_not_started); an arm was promoted already (code already_promoted); or no `arm` was named and the results name no winner (code no_winner).',
          ),
          '413': tooLarge,
        }),
      },
    }),
  },
  '/v1/feedback': {
    post: {
      operationId: 'createFeedback',
      tags: ['Feedback'],
      summary: 'Rate an answer',
      description:
        "Records a value of a feedback metric for a request of this key that entered an A/B experiment (its x-request-id); it counts for the arm the request was assigned, even after the experiment ended. Sending again for the same request and metric replaces the value. Any key, for its own requests only.",
      parameters: [requestId],
      requestBody: { description: 'The rating.', required: true, content: json('FeedbackCreate') },
      responses: {
        '200': { description: 'The value as stored.', headers: headers(...RATE_LIMIT_HEADERS), content: json('Feedback') },
        ...keyedErrors({
          '400': keyedRefusal(
            'The body is not JSON (code invalid_json) or breaks the schema (code invalid_request, `param` names the field); `metric` is not one the experiment collects (`param` metric); or `value` is off the metric\'s scale (`param` value).',
          ),
          '404': keyedRefusal('No request of this key with this id is in an experiment (code request_not_found, `param` request_id): never one, another key\'s, not in an experiment, or its experiment was deleted.'),
          '413': keyedRefusal('The body is larger than 4 KB (code request_too_large).'),
          '503': storeDown,
        }),
      },
    },
  },
};
