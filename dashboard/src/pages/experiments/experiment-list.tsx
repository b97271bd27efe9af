// The experiments, newest first, a page at a time, filtered by status; each name opens its results.
import { useEffect, useState } from 'preact/hooks';
import { get } from '../../api.js';
import { Pager, useCursor } from '../../components/cursor-pager.js';
import { Dialog, Empty, ErrorNotice, formatDate, Loading } from '../../components/ui.js';
import { FormField } from '../../components/form-field.js';
import { useLoaded } from '../../components/use-loaded.js';
import { navigate } from '../../router.js';
import { ExperimentForm } from './experiment-form.js';
import { STATUS_BADGE, type ExperimentList } from './types.js';

export function ExperimentsList() {
  const [status, setStatus] = useState('');
  const [creating, setCreating] = useState(false);
  const cursor = useCursor();
  useEffect(cursor.reset, [status]);
  const list = useLoaded(() => get<ExperimentList>('/v1/admin/experiments', { limit: 20, status, after: cursor.after }), [status, cursor.after]);

  return (
    <section class={creating ? 'dialog-open' : undefined}>
      <h1>Experiments</h1>
      <div class="toolbar">
        <FormField label="Status">
          <select value={status} onChange={(event) => setStatus(event.currentTarget.value)}>
            <option value="">All</option>
            <option value="draft">Draft</option>
            <option value="running">Running</option>
            <option value="stopped">Stopped</option>
            <option value="finished">Finished</option>
          </select>
        </FormField>
        <button type="button" class="toolbar-end" onClick={() => setCreating(true)}>
          Create experiment
        </button>
      </div>
      <ErrorNotice error={list.error} />
      {list.loading && !list.data && <Loading what="Loading experiments" />}
      {list.data?.data.length === 0 && (
        <Empty>{status ? `No ${status} experiments.` : 'No experiments yet — create one to compare models on live traffic.'}</Empty>
      )}
      {list.data && list.data.data.length > 0 && (
        <div class="table-wrap" tabIndex={0}>
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Traffic</th>
                <th scope="col">Arms</th>
                <th scope="col">Primary metric</th>
                <th scope="col">Started</th>
                <th scope="col">Ends</th>
                <th scope="col">Winner</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((experiment) => (
                <tr key={experiment.id}>
                  <td>
                    <a href={`#/experiments?id=${experiment.id}`}>{experiment.name}</a>
                  </td>
                  <td>
                    <span class={`badge ${STATUS_BADGE[experiment.status] ?? 'muted'}`}>{experiment.status}</span>
                  </td>
                  <td>
                    {experiment.match.model ?? 'every chat request'} · {experiment.match.percent}%
                  </td>
                  <td>{experiment.arms.map((arm) => `${arm.name}${arm.model ? ` (${arm.model})` : ''}`).join(', ')}</td>
                  <td>{experiment.primary_metric}</td>
                  <td>{formatDate(experiment.started_at)}</td>
                  <td>{formatDate(experiment.finished_at ?? experiment.ends_at)}</td>
                  <td>{experiment.promoted ? `${experiment.promoted.arm} (promoted)` : (experiment.winner ?? '—')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.data && <Pager cursor={cursor} hasMore={list.data.has_more} lastId={list.data.last_id} label="Pages of experiments" />}
      {creating && (
        <Dialog title="Create experiment" open onClose={() => setCreating(false)}>
          <ExperimentForm onCancel={() => setCreating(false)} onCreated={(experiment) => navigate('/experiments', { id: experiment.id })} />
        </Dialog>
      )}
    </section>
  );
}
