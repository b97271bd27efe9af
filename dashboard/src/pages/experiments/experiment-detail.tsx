// One experiment: its definition, results and decision, and what an admin can do with it now —
// start a draft, stop a running one, promote an arm (the winner by default), delete an ended one.
import { useState } from 'preact/hooks';
import { del, get, patch, post } from '../../api.js';
import { ConfirmDialog } from '../../components/confirm-dialog.js';
import { ErrorNotice, formatDate, Loading } from '../../components/ui.js';
import { FormField } from '../../components/form-field.js';
import { useLoaded } from '../../components/use-loaded.js';
import { navigate } from '../../router.js';
import { ArmsTable, DecisionPanel, MetricTable } from './results.js';
import { STATUS_BADGE, type ExperimentWithResults } from './types.js';

type Open = 'start' | 'stop' | 'promote' | 'delete' | null;

export function ExperimentDetail({ id }: { id: string }) {
  const loaded = useLoaded(() => get<ExperimentWithResults>(`/v1/admin/experiments/${id}`), [id]);
  const [open, setOpen] = useState<Open>(null);
  const [arm, setArm] = useState('');
  const [done, setDone] = useState('');
  const experiment = loaded.data;
  const back = (
    <p>
      <a href="#/experiments">← All experiments</a>
    </p>
  );
  if (!experiment)
    return (
      <section>
        <h1>Experiment</h1>
        {back}
        <ErrorNotice error={loaded.error} />
        {loaded.loading && <Loading what="Loading the experiment" />}
      </section>
    );

  const results = experiment.results;
  const metrics = [...new Set(results.arms.flatMap((result) => Object.keys(result.metrics)))];
  const after = (message: string) => {
    setOpen(null);
    setDone(message);
    loaded.reload();
  };
  const canPromote = experiment.status !== 'draft' && !experiment.promoted;

  return (
    <section class={open ? 'dialog-open' : undefined}>
      <h1>Experiment {experiment.name}</h1>
      {back}
      <p>
        <span class={`badge ${STATUS_BADGE[experiment.status] ?? 'muted'}`}>{experiment.status}</span> {experiment.description}
      </p>
      <p class="muted-text">
        {experiment.match.model ? `Requests for ${experiment.match.model}` : 'Every chat request'}, {experiment.match.percent}% of units by {experiment.unit}
        {experiment.match.keys && ` from ${experiment.match.keys.length} keys`}. Started {formatDate(experiment.started_at)}; ends {formatDate(experiment.ends_at)}
        {experiment.finished_at && `; finished ${formatDate(experiment.finished_at)} (${experiment.finish_reason ?? '—'})`}
        {experiment.promoted && `. Promoted ${experiment.promoted.arm} on ${formatDate(experiment.promoted.at)} by ${experiment.promoted.by}`}.
      </p>
      <div class="actions page-actions">
        {experiment.status === 'draft' && (
          <button type="button" onClick={() => setOpen('start')}>
            Start experiment
          </button>
        )}
        {experiment.status === 'running' && (
          <button type="button" class="secondary" onClick={() => setOpen('stop')}>
            Stop experiment
          </button>
        )}
        {canPromote && (
          <button
            type="button"
            onClick={() => {
              setArm(results.decision.winner ?? experiment.arms[0]!.name);
              setOpen('promote');
            }}
          >
            Promote
          </button>
        )}
        {experiment.status !== 'running' && (
          <button type="button" class="danger" onClick={() => setOpen('delete')}>
            Delete experiment
          </button>
        )}
        <button type="button" class="secondary" onClick={loaded.reload}>
          Refresh results
        </button>
      </div>
      <p role="status" class="success">
        {done}
      </p>
      <ErrorNotice error={loaded.error} />
      <h2>Decision</h2>
      <DecisionPanel decision={results.decision} computedAt={results.computed_at} />
      <h2>Arms</h2>
      <ArmsTable arms={results.arms} />
      {metrics.map((metric) => (
        <div key={metric}>
          <h2>
            {metric}
            {metric === results.decision.primary_metric && <span class="muted-text"> (primary)</span>}
          </h2>
          <MetricTable metric={metric} arms={results.arms} />
        </div>
      ))}

      {open === 'start' && (
        <ConfirmDialog title={`Start ${experiment.name}?`} confirmLabel="Start experiment" onClose={() => setOpen(null)} onConfirm={async () => {
          await patch(`/v1/admin/experiments/${id}`, { status: 'running' });
          after('Started.');
        }}>
          <p>Matching traffic is split between the arms from now on, for {experiment.duration_days} days.</p>
        </ConfirmDialog>
      )}
      {open === 'stop' && (
        <ConfirmDialog title={`Stop ${experiment.name}?`} confirmLabel="Stop experiment" danger onClose={() => setOpen(null)} onConfirm={async () => {
          await post(`/v1/admin/experiments/${id}/stop`);
          after('Stopped: traffic routes as before.');
        }}>
          <p>No more requests enter it; its results stay. A stopped experiment cannot be started again.</p>
        </ConfirmDialog>
      )}
      {open === 'promote' && (
        <ConfirmDialog title={`Promote an arm of ${experiment.name}?`} confirmLabel="Promote" onClose={() => setOpen(null)} onConfirm={async () => {
          await post(`/v1/admin/experiments/${id}/promote`, { arm });
          after(`Promoted ${arm}.`);
        }}>
          <FormField label="Arm to promote" hint={results.decision.winner ? `The decision's winner is ${results.decision.winner}.` : 'The decision names no winner yet.'}>
            <select value={arm} onChange={(event) => setArm(event.currentTarget.value)}>
              {experiment.arms.map((candidate) => (
                <option key={candidate.name} value={candidate.name}>
                  {candidate.name}
                  {candidate.model ? ` (${candidate.model})` : ''}
                </option>
              ))}
            </select>
          </FormField>
          <p>All of the experiment's matching traffic goes to this arm from now on, until the experiment is deleted{experiment.status === 'running' ? '; the experiment finishes' : ''}.</p>
        </ConfirmDialog>
      )}
      {open === 'delete' && (
        <ConfirmDialog title={`Delete ${experiment.name}?`} confirmLabel="Delete experiment" danger onClose={() => setOpen(null)} onConfirm={async () => {
          await del(`/v1/admin/experiments/${id}`);
          navigate('/experiments');
        }}>
          <p>Its assignments, feedback and results are removed{experiment.promoted ? ', and its promotion ends: traffic routes as before' : ''}. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
