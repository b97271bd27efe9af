// Whether a budget alert rule paused paid traffic, and for admins the way to resume it
// (POST /v1/admin/budget/resume, after a confirmation).
import { useState } from 'preact/hooks';
import { post } from '../../api.js';
import { Dialog, ErrorNotice, formatDate, formatPercent } from '../../components/ui.js';
import type { Usage } from '../../types/analytics.js';

export function TrafficState({ paused, admin, onResumed }: { paused: Usage['paused']; admin: boolean; onResumed: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState('');

  if (!paused)
    return (
      <p class="traffic" role="status">
        <span class="badge ok">Traffic flowing</span> No budget pause is in force.{done && <> {done}</>}
      </p>
    );

  return (
    <div class="notice traffic">
      <p>
        <span class="badge bad">Traffic paused</span> Spend reached {formatPercent(paused.threshold, 0)} of the {paused.period} budget ({paused.period_key}):
        paid requests are refused until {formatDate(paused.until)}
        {admin ? ' or until you resume.' : ' or until an admin resumes.'}
      </p>
      {admin && (
        <button type="button" class="danger" onClick={() => setConfirming(true)}>
          Resume traffic
        </button>
      )}
      <ErrorNotice error={error} />
      <Dialog title="Resume traffic?" open={confirming} onClose={() => setConfirming(false)}>
        <p>Paid requests will be served again although the {paused.period} budget reached its alert threshold. Spend stays within the budget limits.</p>
        <div class="actions">
          <button
            type="button"
            class="danger"
            disabled={busy}
            onClick={async () => {
              setBusy(true);
              setError(null);
              try {
                const answer = await post<{ resumed: boolean }>('/v1/admin/budget/resume');
                setDone(answer.resumed ? 'Traffic resumed.' : 'There was no pause to end.');
                setConfirming(false);
                onResumed();
              } catch (failure) {
                setError(failure);
                setConfirming(false);
              } finally {
                setBusy(false);
              }
            }}
          >
            Resume traffic now
          </button>
          <button type="button" class="secondary" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      </Dialog>
    </div>
  );
}
