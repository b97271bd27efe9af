// One endpoint's delivery log, newest first: status filter, cursor pages, each delivery's attempts,
// and Replay (the same event queued again as a new delivery, shown at the top once it is read back).
import { useEffect, useState } from 'preact/hooks';
import { get, post } from '../../api.js';
import { Pager, useCursor } from '../../components/cursor-pager.js';
import { Empty, ErrorNotice, formatDate, formatMs, Loading } from '../../components/ui.js';
import { FormField } from '../../components/form-field.js';
import { useLoaded } from '../../components/use-loaded.js';
import type { Delivery, Page } from './types.js';

const BADGE: Record<Delivery['status'], string> = { delivered: 'ok', pending: 'muted', failed: 'bad', skipped: 'warn' };

export function Deliveries({ endpointId }: { endpointId: string }) {
  const [status, setStatus] = useState('');
  const [replayed, setReplayed] = useState<Delivery | null>(null);
  const [error, setError] = useState<unknown>(null);
  const cursor = useCursor();
  useEffect(cursor.reset, [status, endpointId]);
  const list = useLoaded(
    () => get<Page<Delivery>>(`/v1/admin/webhooks/${endpointId}/deliveries`, { limit: 50, status, after: cursor.after }),
    [endpointId, status, cursor.after],
  );
  const replay = async (delivery: Delivery) => {
    setError(null);
    try {
      setReplayed(await post<Delivery>(`/v1/admin/webhooks/${endpointId}/deliveries/${delivery.id}/replay`));
      list.reload();
    } catch (caught) {
      setError(caught);
    }
  };

  return (
    <div>
      <div class="toolbar">
        <FormField label="Delivery status">
          <select value={status} onChange={(event) => setStatus(event.currentTarget.value)}>
            <option value="">All</option>
            <option value="pending">Pending</option>
            <option value="delivered">Delivered</option>
            <option value="failed">Failed</option>
            <option value="skipped">Skipped</option>
          </select>
        </FormField>
        <button type="button" class="secondary" onClick={list.reload}>
          Refresh
        </button>
      </div>
      <p role="status" class="success">
        {replayed && `Replay queued as ${replayed.id} (${replayed.status}) for event ${replayed.event_id}.`}
      </p>
      <ErrorNotice error={error ?? list.error} />
      {list.loading && !list.data && <Loading what="Loading deliveries" />}
      {list.data?.data.length === 0 && <Empty>{status ? `No ${status} deliveries.` : 'Nothing was sent to this endpoint yet.'}</Empty>}
      {list.data && list.data.data.length > 0 && (
        <div class="table-wrap" tabIndex={0}>
          <table>
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">Attempts</th>
                <th scope="col">Last answer</th>
                <th scope="col">Attempt log</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((delivery) => (
                <tr key={delivery.id} class={delivery.id === replayed?.id ? 'selected' : undefined}>
                  <td>{formatDate(delivery.created_at)}</td>
                  <td>
                    <code>{delivery.event_type}</code>
                    <br />
                    <span class="muted-text">{delivery.id}</span>
                    {delivery.replay_of && <span class="muted-text"> · replays {delivery.replay_of}</span>}
                  </td>
                  <td>
                    <span class={`badge ${BADGE[delivery.status] ?? 'muted'}`}>{delivery.status}</span>
                    {delivery.next_attempt_at && <div class="muted-text">next {formatDate(delivery.next_attempt_at)}</div>}
                    {delivery.delivered_at && <div class="muted-text">at {formatDate(delivery.delivered_at)}</div>}
                  </td>
                  <td class="num">{delivery.attempts}</td>
                  <td>
                    {delivery.last_status_code ?? '—'} · {formatMs(delivery.last_latency_ms)}
                    {delivery.last_error && <div class="error-text">{delivery.last_error}</div>}
                  </td>
                  <td>
                    {delivery.attempt_log.length === 0 ? (
                      '—'
                    ) : (
                      <details>
                        <summary>{delivery.attempt_log.length === 1 ? "1 attempt" : `${delivery.attempt_log.length} attempts`}</summary>
                        <ol class="attempts">
                          {delivery.attempt_log.map((attempt, index) => (
                            <li key={index}>
                              {formatDate(attempt.at)}: {attempt.ok ? 'ok' : 'failed'} {attempt.status_code ?? ''} in {formatMs(attempt.latency_ms)}
                              {attempt.error && ` — ${attempt.error}`}
                            </li>
                          ))}
                        </ol>
                      </details>
                    )}
                  </td>
                  <td>
                    <button type="button" class="secondary" disabled={delivery.status === 'pending'} onClick={() => replay(delivery)}>
                      Replay
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.data && <Pager cursor={cursor} hasMore={list.data.has_more} lastId={list.data.last_id} label="Pages of deliveries" />}
    </div>
  );
}
